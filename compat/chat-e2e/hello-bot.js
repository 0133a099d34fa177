// The bot behind @botpress/chat's own end-to-end suite: it echoes every
// message, forwards the metadata when the text is "metadata", answers "bloc"
// with a bloc of three items, and passes custom events' payloads back.
bot.on.message('*', async ({ message, client }) => {
  const { conversationId, payload } = message
  if (payload.type === 'text' && payload.text === 'metadata') {
    await client.createMessage({ conversationId, payload, metadata: message.metadata })
  } else if (payload.type === 'text' && payload.text === 'bloc') {
    await client.createMessage({
      conversationId,
      payload: {
        type: 'bloc',
        items: [
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
          { type: 'text', text: 'three' },
        ],
      },
    })
  } else {
    await client.createMessage({ conversationId, payload })
  }
})

bot.on.event('*', async ({ event, client }) => {
  await client.createEvent({ conversationId: event.conversationId, payload: event.payload })
})

// A bot written with @botpress/sdk that answers through a language model
// with @botpress/zai, run by test/llm-bots.test.js with `bp deploy`. zai
// (through @botpress/cognitive) finds the models of the bot's openai
// integration and calls them with callAction.
import { Bot } from '@botpress/sdk'
import { Zai } from '@botpress/zai'

const bot = new Bot({ integrations: {}, plugins: {}, states: {}, events: {}, actions: {} } as any)

const say = (client: any, ctx: any, conversationId: string, text: string) =>
  client.createMessage({ conversationId, userId: ctx.botId, tags: {}, type: 'text', payload: { text } })

bot.on.message('*', async ({ message, client, ctx }: any) => {
  const zai = new Zai({ client })
  const question: string = message.payload.text
  if (question.startsWith('check:')) {
    const yes = await zai.check(question.slice('check:'.length), 'is about animals')
    return say(client, ctx, message.conversationId, yes ? 'yes' : 'no')
  }
  return say(client, ctx, message.conversationId, await zai.text(`Answer in one sentence: ${question}`))
})

export default bot

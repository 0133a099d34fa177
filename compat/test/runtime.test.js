// Bot runtime compatibility: bot code deployed with @botpress/client runs
// for messages sent with @botpress/chat; actions are called and logs read
// with @botpress/client (docs/bot-code.md).

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client as ChatClient } from '@botpress/chat'
import { Client, InvalidPayloadError, ResourceNotFoundError, RuntimeError, ForbiddenError } from '@botpress/client'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const code = `
bot.hook.beforeOutgoingMessage('text', ({ data }) => {
  if (data.payload.text === 'secret') return { stop: true }
})
bot.on.message('text', async ({ message, event, state, client, logger, ctx }) => {
  state.conversation.count = (state.conversation.count || 0) + 1
  logger.info('got', event.preview, 'in', event.conversationId)
  const text = message.payload.text === 'whoami'
    ? JSON.stringify({ botId: event.botId, direction: event.direction, type: event.type, greeting: ctx.configuration.greeting })
    : message.payload.text + ' #' + state.conversation.count
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text } })
})
bot.action('add', async ({ input }) => ({ sum: input.a + input.b }))
bot.action('fail', async () => { throw new Error('it broke') })
`

let server, client, bot, chat

before(async () => {
  server = await startServer({ args: ['--sse-ping-interval', '1s'] })
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  ;({ bot } = await client.createBot({ name: 'runtime compat', code, configuration: { data: { greeting: 'hello' } } }))
  chat = await ChatClient.connect({ apiUrl: bot.integrations.chat.webhookUrl })
})

after(async () => {
  await server?.stop()
})

// converse sends a text and resolves with the bot's answer (the first bot
// message that matches), read on the conversation's signal stream.
async function converse(conversationId, text, match = (t) => t.startsWith(text + ' #')) {
  const listener = await chat.listenConversation({ id: conversationId })
  try {
    const reply = new Promise((resolve, reject) => {
      listener.on('message_created', (m) => m.isBot && match(m.payload.text) && resolve(m))
      listener.on('error', reject)
    })
    const { message } = await chat.createMessage({ conversationId, payload: { type: 'text', text } })
    const answer = await reply
    return { message, answer }
  } finally {
    await listener.disconnect()
    listener.cleanup()
  }
}

describe('bot code', () => {
  test('replies through the official chat client, with state kept between messages', async () => {
    const { conversation } = await chat.createConversation({})
    const first = await converse(conversation.id, 'hi')
    assert.equal(first.answer.payload.text, 'hi #1')
    assert.equal(first.answer.userId, bot.id)
    assert.ok(new Date(first.answer.createdAt) > new Date(first.message.createdAt))
    const second = await converse(conversation.id, 'again')
    assert.equal(second.answer.payload.text, 'again #2')
  })

  test('handlers see the event object and the bot configuration', async () => {
    const { conversation } = await chat.createConversation({})
    const { answer } = await converse(conversation.id, 'whoami', (t) => t.startsWith('{'))
    assert.deepEqual(JSON.parse(answer.payload.text), { botId: bot.id, direction: 'incoming', type: 'message', greeting: 'hello' })
  })

  test('getBotLogs returns what the code logged, filtered by conversation', async () => {
    const { conversation } = await chat.createConversation({})
    await converse(conversation.id, 'log me')
    const { logs } = await client.getBotLogs({ id: bot.id, timeStart: new Date(Date.now() - 60_000).toISOString(), conversationId: conversation.id })
    assert.ok(logs.some((l) => l.message === `got log me in ${conversation.id}` && l.level === 'info'), JSON.stringify(logs))
  })

  test('a syntax error is refused at deploy with line and column, and the old code keeps running', async () => {
    await assert.rejects(client.updateBot({ id: bot.id, code: "bot.on.message('*', () => {})\nconst x = ;" }), (err) => {
      assert.ok(err instanceof InvalidPayloadError, String(err))
      assert.match(err.message, /^code: syntax error at line 2, column \d+/)
      return true
    })
    const { conversation } = await chat.createConversation({})
    const { answer } = await converse(conversation.id, 'still')
    assert.equal(answer.payload.text, 'still #1')
  })
})

describe('callAction', () => {
  test('returns the action output', async () => {
    const actions = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId, botId: bot.id })
    const res = await actions.callAction({ type: 'add', input: { a: 2, b: 3 } })
    assert.deepEqual(res, { output: { sum: 5 }, meta: { cached: false } })
  })

  test('errors: unknown action, failing action, viewer role', async () => {
    const actions = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId, botId: bot.id })
    await assert.rejects(actions.callAction({ type: 'nope', input: {} }), ResourceNotFoundError)
    await assert.rejects(actions.callAction({ type: 'fail', input: {} }), (err) => {
      assert.ok(err instanceof RuntimeError, String(err))
      assert.match(err.message, /it broke/)
      return true
    })
    const viewerToken = await server.issueToken('runtime-viewer@example.com')
    const member = await client.createWorkspaceMember({ email: 'runtime-viewer@example.com', role: 'viewer' })
    assert.equal(member.role, 'viewer')
    const viewer = new Client({ apiUrl: server.apiUrl, token: viewerToken, workspaceId: server.workspaceId, botId: bot.id })
    await assert.rejects(viewer.callAction({ type: 'add', input: { a: 1, b: 1 } }), ForbiddenError)
  })
})

// The messages of @botpress/sdk on the Runtime API (docs/runtime-api.md,
// "Messages"): a bot writes each of the SDK's default message types with
// @botpress/client and chat users list it in the Chat API's shape; a chat
// user's bloc and carousel reach a bot written with @botpress/sdk in the
// SDK's shape. Each payload is checked against the SDK's own schemas.

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client as ChatClient } from '@botpress/chat'
import { InvalidPayloadError } from '@botpress/client'
import * as sdk from '@botpress/sdk'
import { startServer, backends } from '../support/server.js'
import { newBot } from '../support/admin.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const WAIT_MS = 30_000 // a hang guard, never a speed requirement

// The SDK's schema of each type: its default messages, and markdown, which
// the chat integration's channel declares too (with the markdown bloc).
const sdkSchema = (type) => (type === 'markdown' ? sdk.messages.markdown : sdk.messages.defaults[type]).schema

const card = (title) => ({ title, subtitle: 'sub', imageUrl: 'https://example.test/c.png', actions: [{ action: 'postback', label: 'Pick', value: title }] })

// One message of each type as a bot writes it, and as the Chat API lists it.
const messages = {
  text: [{ text: 'hi' }, { type: 'text', text: 'hi' }],
  markdown: [{ markdown: '**hi**' }, { type: 'markdown', markdown: '**hi**' }],
  image: [{ imageUrl: 'https://example.test/a.png', title: 'A' }, { type: 'image', imageUrl: 'https://example.test/a.png', title: 'A' }],
  audio: [{ audioUrl: 'https://example.test/a.mp3' }, { type: 'audio', audioUrl: 'https://example.test/a.mp3' }],
  video: [{ videoUrl: 'https://example.test/a.mp4', title: 'V' }, { type: 'video', videoUrl: 'https://example.test/a.mp4', title: 'V' }],
  file: [{ fileUrl: 'https://example.test/a.pdf', title: 'F' }, { type: 'file', fileUrl: 'https://example.test/a.pdf', title: 'F' }],
  location: [{ latitude: 45.5, longitude: -73.6, address: '1 Main St', title: 'Here' }, { type: 'location', latitude: 45.5, longitude: -73.6, address: '1 Main St', title: 'Here' }],
  card: [card('one'), { type: 'card', ...card('one') }],
  carousel: [{ items: [card('one'), card('two')] }, { type: 'carousel', items: [{ type: 'card', ...card('one') }, { type: 'card', ...card('two') }] }],
  dropdown: [{ text: 'Pick', options: [{ label: 'One', value: '1' }] }, { type: 'dropdown', text: 'Pick', options: [{ label: 'One', value: '1' }] }],
  choice: [{ text: 'Pick', options: [{ label: 'One', value: '1' }, { label: 'Two', value: '2' }] }, { type: 'choice', text: 'Pick', options: [{ label: 'One', value: '1' }, { label: 'Two', value: '2' }] }],
  bloc: [
    {
      items: [
        { type: 'text', payload: { text: 'hi' } },
        { type: 'image', payload: { imageUrl: 'https://example.test/a.png' } },
        { type: 'audio', payload: { audioUrl: 'https://example.test/a.mp3' } },
        { type: 'video', payload: { videoUrl: 'https://example.test/a.mp4' } },
        { type: 'file', payload: { fileUrl: 'https://example.test/a.pdf', title: 'F' } },
        { type: 'location', payload: { latitude: 1, longitude: 2 } },
      ],
    },
    {
      type: 'bloc',
      items: [
        { type: 'text', text: 'hi' },
        { type: 'image', imageUrl: 'https://example.test/a.png' },
        { type: 'audio', audioUrl: 'https://example.test/a.mp3' },
        { type: 'video', videoUrl: 'https://example.test/a.mp4' },
        { type: 'file', fileUrl: 'https://example.test/a.pdf', title: 'F' },
        { type: 'location', latitude: 1, longitude: 2 },
      ],
    },
  ],
}

/** Asserts that payload is exactly a message of the SDK's type: valid, and nothing the SDK's schema drops. */
function assertSDK(type, payload) {
  assert.deepEqual(sdkSchema(type).parse(payload), payload, `${type} payload in the SDK's shape`)
}

for (const backend of backends()) {
  describe(`@botpress/sdk messages on the Runtime API (${backend})`, () => {
    let server, admin, bot, rt, chat, conversation, sdkServer

    before(async () => {
      server = await startServer({ backend })
      ;({ admin, bot, rt } = await newBot(server, 'sdk messages'))
      chat = await ChatClient.connect({ apiUrl: bot.integrations.chat.webhookUrl })
      ;({ conversation } = await chat.createConversation({}))
    })

    after(async () => {
      sdkServer?.close()
      await server?.stop()
    })

    test('the examples are messages of the SDK', () => {
      for (const [type, [payload]] of Object.entries(messages)) assertSDK(type, payload)
    })

    for (const [type, [payload, chatPayload]] of Object.entries(messages)) {
      test(`${type}: a bot creates it in the SDK's shape, the chat user lists it in the Chat API's`, async () => {
        const { message } = await rt.createMessage({ conversationId: conversation.id, userId: bot.id, type, payload, tags: {} })
        assert.equal(message.type, type)
        assert.deepEqual(message.payload, payload)
        assert.deepEqual((await rt.getMessage({ id: message.id })).message.payload, payload)
        const { messages: listed } = await chat.listMessages({ conversationId: conversation.id })
        const seen = listed.find((m) => m.id === message.id)
        assert.ok(seen, `message ${message.id} listed`)
        assert.deepEqual(seen.payload, chatPayload)
        assert.deepEqual((await chat.getMessage({ id: message.id })).message.payload, chatPayload)
      })
    }

    test("a payload already in the Chat API's shape is kept", async () => {
      for (const type of ['carousel', 'bloc']) {
        const { type: _, ...flat } = messages[type][1]
        const { message } = await rt.createMessage({ conversationId: conversation.id, userId: bot.id, type, payload: flat, tags: {} })
        assert.deepEqual(message.payload, messages[type][0], `${type} read back in the SDK's shape`)
        assert.deepEqual((await chat.getMessage({ id: message.id })).message.payload, messages[type][1])
      }
    })

    test("payload.metadata is the chat message's metadata; updateMessage replaces it", async () => {
      const { message } = await rt.createMessage({
        conversationId: conversation.id, userId: bot.id, type: 'text', payload: { text: 'with metadata', metadata: { source: 'crm' } }, tags: {},
      })
      assert.deepEqual(message.payload, { text: 'with metadata', metadata: { source: 'crm' } })
      const seen = (await chat.getMessage({ id: message.id })).message
      assert.deepEqual(seen.payload, { type: 'text', text: 'with metadata' })
      assert.deepEqual(seen.metadata, { source: 'crm' })
      const { message: edited } = await rt.updateMessage({ id: message.id, payload: { text: 'edited', metadata: { source: 'erp' } }, tags: {} })
      assert.deepEqual(edited.payload, { text: 'edited', metadata: { source: 'erp' } })
      assert.deepEqual((await chat.getMessage({ id: message.id })).message.metadata, { source: 'erp' })
    })

    test('bad payloads are refused naming the field as the bot wrote it', async () => {
      const refused = async (type, payload, re) => {
        await assert.rejects(rt.createMessage({ conversationId: conversation.id, userId: bot.id, type, payload, tags: {} }), (e) => {
          assert.ok(e instanceof InvalidPayloadError, `${e}`)
          assert.match(e.message, re)
          return true
        })
      }
      await refused('bloc', { items: [{ type: 'image', payload: {} }] }, /payload\.items\.0\.payload\.imageUrl: is required/)
      await refused('bloc', { items: [{ type: 'card', payload: card('x') }] }, /payload\.items\.0\.type: /)
      await refused('carousel', { items: [{ actions: [] }] }, /payload\.items\.0\.title: is required/)
      await refused('choice', { text: 'Pick', options: [{ label: 'One' }] }, /payload\.options\.0\.value: is required/)
      await refused('sticker', { url: 'x' }, /^type: /)
    })

    test("a chat user's bloc and carousel reach a bot written with @botpress/sdk in the SDK's shape", async () => {
      const received = []
      let wake
      const sdkBot = new sdk.Bot({ integrations: {}, plugins: {}, states: {}, events: {} })
      sdkBot.on.message('*', async ({ message }) => {
        received.push(message)
        wake?.()
      })
      process.env.BP_API_URL = server.apiUrl
      process.env.BP_TOKEN = (await admin.createBotApiKey({ botId: bot.id })).value
      sdkServer = await sdkBot.start(0)
      await admin.updateBot({ id: bot.id, url: `http://127.0.0.1:${sdkServer.address().port}` })

      const { conversation: talk } = await chat.createConversation({})
      const sent = {}
      for (const type of ['bloc', 'carousel']) {
        sent[type] = (await chat.createMessage({ conversationId: talk.id, payload: messages[type][1] })).message.id
      }
      const deadline = Date.now() + WAIT_MS
      while (received.length < 2 && Date.now() < deadline) {
        await new Promise((resolve) => {
          wake = resolve
          setTimeout(resolve, 500)
        })
      }
      for (const type of ['bloc', 'carousel']) {
        const message = received.find((m) => m.id === sent[type])
        assert.ok(message, `the bot received the ${type} (got ${JSON.stringify(received)})`)
        assert.equal(message.type, type)
        assert.equal(message.direction, 'incoming')
        assert.deepEqual(message.payload, messages[type][0])
        assertSDK(type, message.payload)
        assert.deepEqual((await rt.getMessage({ id: sent[type] })).message.payload, messages[type][0])
      }
      const { messages: listed } = await rt.listMessages({ conversationId: talk.id })
      for (const m of listed) assertSDK(m.type, m.payload)
    })
  })
}

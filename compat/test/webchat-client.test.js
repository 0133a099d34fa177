// The official web chat's client, @botpress/webchat-client 0.7.3, against a
// bot's Chat API (apiUrl = the Chat API's base, clientId = the bot's chat
// webhook id): the initialize stream, users and their data, messages with
// their updates and feedback, events, typing, user keys made with the admin
// secret, and the refusals (docs/webchat.md#the-official-web-chat).

import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@botpress/client'
import { initialize, createClient, generateUserKey } from '@botpress/webchat-client'
import jwt from 'jsonwebtoken'
import { startServer, backends } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const WAIT_MS = 60_000 // a hang guard

// The bot shows that it is writing, then echoes, then edits its answer.
const code = `bot.on.message('*', async ({ message, client }) => {
  const text = message.payload.text
  await client.callAction({ type: 'chat:startTypingIndicator', input: { conversationId: message.conversationId, messageId: message.id, timeout: 4000 } })
  const { message: answer } = await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'echo: ' + text } })
  await client.callAction({ type: 'chat:stopTypingIndicator', input: { conversationId: message.conversationId, messageId: message.id } })
  if (text === 'edit') {
    await client.updateMessage({ id: answer.id, tags: {}, payload: { text: 'edited' } })
  }
  if (text === 'event') {
    await client.callAction({ type: 'chat:sendEvent', input: { conversationId: message.conversationId, payload: { kind: 'confetti' } } })
  }
})
`

// signals records every signal of a subscribable and waits for one.
function signals(sub) {
  const seen = []
  const waiters = []
  for (const type of ['init', 'message_created', 'message_updated', 'typing_started', 'typing_stopped', 'custom',
    'participant_added', 'participant_removed', 'message_status_changed', 'webchat_visibility', 'webchat_config', 'error']) {
    sub.on(type, (data) => {
      seen.push({ type, data })
      for (const w of [...waiters]) w()
    })
  }
  const next = (type, pred = () => true) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${type} signal within ${WAIT_MS} ms; seen ${JSON.stringify(seen.map((s) => s.type))}`)), WAIT_MS)
      const check = () => {
        const i = seen.findIndex((s) => s.type === type && pred(s.data))
        if (i >= 0) {
          const [s] = seen.splice(i, 1)
          clearTimeout(timer)
          waiters.splice(waiters.indexOf(check), 1)
          resolve(s.data)
        }
      }
      waiters.push(check)
      check()
    })
  return { next, seen }
}

// openChat initializes the web chat of clientId: its signals, its init,
// and a client with the user's key.
async function openChat(apiUrl, clientId, params = {}) {
  const sub = initialize({ apiUrl, clientId, ...params })
  const s = signals(sub)
  const init = await s.next('init')
  return { sub, ...s, init, client: createClient({ apiUrl, clientId, userKey: init.user.userKey }) }
}

for (const backend of backends()) {
  describe(`the official web chat's client (${backend})`, () => {
    let server, admin, bot, apiUrl, clientId, secret

    before(async () => {
      server = await startServer({ backend })
      admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
      ;({ bot } = await admin.createBot({ name: 'official web chat', code }))
      const chat = bot.integrations.chat
      clientId = chat.webhookId
      apiUrl = chat.webhookUrl.slice(0, -(clientId.length + 1))
      secret = chat.configuration.encryptionKey
    })

    after(async () => {
      await server?.stop()
    })

    const open = (params = {}) => openChat(apiUrl, clientId, params)

    test(`initialize opens a conversation for a new user; messages, typing, updates, events and feedback arrive on it`, async () => {
      const w = await open()
      try {
        const { init, client } = w
        assert.match(init.conversation.id, /\S/)
        assert.match(init.user.id, /\S/)
        assert.equal(typeof init.user.userKey, 'string')
        assert.deepEqual(init.messages, [])
        assert.deepEqual(init.participants.map((p) => p.id), [init.user.id])

        // The widget's first call: conversation_started, answered with whether it is new.
        const { event } = await client.createEvent({ conversationId: init.conversation.id, payload: { type: 'conversation_started', data: {} } })
        assert.equal(event.payload.type, 'conversation_started')
        assert.deepEqual(event.payload.data.status, { isInitial: true })

        // A message as the widget sends it: its clientMessageId comes back on the signal.
        const { message } = await client.createMessage({ conversationId: init.conversation.id, payload: { type: 'text', text: 'hi' }, metadata: { clientMessageId: 'cm-1' } })
        assert.equal(message.metadata.clientMessageId, 'cm-1')
        const mine = await w.next('message_created', (m) => m.id === message.id)
        assert.equal(mine.metadata.clientMessageId, 'cm-1')
        assert.equal(mine.userId, init.user.id)

        const typing = await w.next('typing_started')
        assert.equal(typing.timeout, 4000)
        const answer = await w.next('message_created', (m) => m.userId !== init.user.id)
        assert.deepEqual(answer.payload, { type: 'text', text: 'echo: hi' })
        await w.next('typing_stopped')

        // The bot edits its answer: message_updated.
        await client.createMessage({ conversationId: init.conversation.id, payload: { type: 'text', text: 'edit' } })
        const edited = await w.next('message_updated', (m) => m.payload.text === 'edited')
        assert.notEqual(edited.userId, init.user.id)

        // The bot's custom event: custom.
        await client.createMessage({ conversationId: init.conversation.id, payload: { type: 'text', text: 'event' } })
        const custom = await w.next('custom')
        assert.deepEqual(custom.event, { kind: 'confetti' })

        // The user edits its own message.
        const { message: updated } = await client.updateMessage({ messageId: message.id, payload: { type: 'text', text: 'hi!' } })
        assert.equal(updated.payload.text, 'hi!')
        assert.equal((await w.next('message_updated', (m) => m.id === message.id)).payload.text, 'hi!')

        // Feedback on the bot's answer: kept with the message, which the bot reads in its tags.
        assert.deepEqual(await client.addMessageFeedback({ messageId: answer.id, value: 'negative', comment: 'too short' }), {})
        assert.deepEqual((await client.getMessage({ messageId: answer.id })).message.feedback, { value: 'negative', comment: 'too short' })
        assert.deepEqual((await w.next('message_updated', (m) => m.id === answer.id)).feedback, { value: 'negative', comment: 'too short' })
        const botClient = new Client({ apiUrl: server.apiUrl, token: server.token, botId: bot.id })
        const seenByBot = await botClient.getMessage({ id: answer.id })
        assert.equal(seenByBot.message.tags['chat:feedback'], 'negative')
        assert.equal(seenByBot.message.tags['chat:feedbackComment'], 'too short')
        assert.deepEqual(await client.removeMessageFeedback({ messageId: answer.id }), {})
        assert.equal((await client.getMessage({ messageId: answer.id })).message.feedback, undefined)

        // Participants come and go: the web chat gets the participant itself.
        const guest = await open()
        guest.sub.disconnect()
        await client.updateUser({ name: 'Owner' })
        await guest.client.updateUser({ name: 'Guest' })
        await client.addParticipant({ conversationId: init.conversation.id, userId: guest.init.user.id })
        const added = await w.next('participant_added')
        assert.equal(added.conversationId, init.conversation.id)
        assert.equal(added.participant.id, guest.init.user.id)
        assert.equal(added.participant.name, 'Guest')
        await client.removeParticipant({ conversationId: init.conversation.id, userId: guest.init.user.id })
        assert.equal((await w.next('participant_removed')).participantId, guest.init.user.id)

        // Reopening with the key and the conversation finds the history, newest first.
        const again = await open({ userToken: init.user.userKey, conversationId: init.conversation.id })
        try {
          assert.equal(again.init.conversation.id, init.conversation.id)
          assert.equal(again.init.user.id, init.user.id)
          const texts = again.init.messages.map((m) => m.payload.text)
          assert.equal(texts.at(-1), 'hi!')
          assert.ok(texts.indexOf('echo: hi') < texts.indexOf('hi!'), texts.join(', '))
          const { event: later } = await again.client.createEvent({ conversationId: init.conversation.id, payload: { type: 'conversation_started', data: {} } })
          assert.deepEqual(later.payload.data.status, { isInitial: false })
        } finally {
          again.sub.disconnect()
        }
      } finally {
        w.sub.disconnect()
      }
    })

    test(`user data and attributes: objects or tokens signed with the bot secret`, async () => {
      const w = await open()
      try {
        const { client } = w
        let { user } = await client.updateUser({ name: 'Ada', userData: { plan: 'pro', seats: 3 }, attributes: { locale: 'en' } })
        assert.equal(user.name, 'Ada')
        assert.deepEqual(user.data, { plan: 'pro', seats: 3 })
        assert.deepEqual(user.attributes, { locale: 'en' })
        ;({ user } = await client.getUser())
        assert.deepEqual(user.data, { plan: 'pro', seats: 3 })

        const token = jwt.sign({ plan: 'enterprise' }, secret, { algorithm: 'HS256' })
        ;({ user } = await client.updateUser({ userData: token, attributes: { locale: null, team: 'core' } }))
        assert.deepEqual(user.data, { plan: 'enterprise' })
        assert.deepEqual(user.attributes, { team: 'core' })

        await assert.rejects(client.updateUser({ userData: jwt.sign({ plan: 'free' }, 'not the secret', { algorithm: 'HS256' }) }), (err) => {
          assert.match(err.message, /userData/)
          return true
        })
        await assert.rejects(client.updateUser({ userData: { big: 'x'.repeat(5000) } }), (err) => {
          assert.match(err.message, /userData: at most 4096 bytes/)
          return true
        })
        assert.deepEqual((await client.getUser()).user.data, { plan: 'enterprise' }, 'nothing changed by a refusal')
      } finally {
        w.sub.disconnect()
      }
    })

    test(`attachments: a file uploaded as the web chat does, within the rules for chat users`, async () => {
      const w = await open()
      try {
        const { client, init } = w
        const botClient = new Client({ apiUrl: server.apiUrl, token: server.token, botId: bot.id })
        const { file: botsOwn } = await botClient.uploadFile({ key: 'photo.png', content: 'the bot\'s own file' })

        const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4d60000000049454e44ae426082', 'hex')
        const expiresAt = new Date(Date.now() + 7 * 24 * 3600_000).toISOString()
        const { file } = await client.createFile({
          key: 'abc123-photo.png', size: png.length, accessPolicies: ['public_content'], index: false,
          tags: { source: 'integration', integrationName: 'webchat', conversation: init.conversation.id, user: 'someone-else' }, expiresAt,
        })
        assert.equal(file.contentType, 'image/png')
        assert.equal(file.status, 'upload_pending')
        assert.equal(file.tags.user, init.user.id, 'the uploader is who the key says')
        assert.match(file.uploadUrl, /^http/)

        // A page of another origin may upload: the upload URL is its own permission.
        const pre = await fetch(file.uploadUrl, { method: 'OPTIONS', headers: { origin: 'https://shop.example.com', 'access-control-request-method': 'PUT', 'access-control-request-headers': 'content-type,x-amz-tagging' } })
        assert.equal(pre.status, 204)
        assert.equal(pre.headers.get('access-control-allow-origin'), '*')
        assert.match(pre.headers.get('access-control-allow-headers'), /x-amz-tagging/)
        const put = await fetch(file.uploadUrl, { method: 'PUT', headers: { 'x-amz-tagging': 'public=true', 'content-type': file.contentType, origin: 'https://shop.example.com' }, body: png })
        assert.equal(put.status, 200, await put.text())
        assert.equal(put.headers.get('access-control-allow-origin'), '*')

        const got = await fetch(file.url)
        assert.equal(got.status, 200)
        assert.deepEqual(Buffer.from(await got.arrayBuffer()), png)
        assert.equal(got.headers.get('content-type'), 'image/png')
        assert.equal(got.headers.get('x-content-type-options'), 'nosniff')
        assert.equal(got.headers.get('content-security-policy'), 'sandbox')

        // A PDF opens in the browser's viewer, which refuses sandboxed documents: it alone goes without the sandbox.
        const pdf = Buffer.from('%PDF-1.4\n%%EOF\n')
        const { file: doc } = await client.createFile({ key: 'terms.pdf', size: pdf.length, accessPolicies: ['public_content'] })
        assert.equal((await fetch(doc.uploadUrl, { method: 'PUT', headers: { 'content-type': doc.contentType }, body: pdf })).status, 200)
        const shown = await fetch(doc.url)
        assert.equal(shown.headers.get('content-type'), 'application/pdf')
        assert.equal(shown.headers.get('x-content-type-options'), 'nosniff')
        assert.equal(shown.headers.get('content-security-policy'), null)

        // The image message the widget then sends.
        const { message } = await client.createMessage({ conversationId: init.conversation.id, payload: { type: 'image', imageUrl: file.url } })
        assert.equal(message.payload.imageUrl, file.url)

        // The bot's own file of the same key is untouched; the bot sees the user's file, owned by the user.
        const { file: still } = await botClient.getFile({ id: botsOwn.id })
        assert.equal(still.size, botsOwn.size ?? 'the bot\'s own file'.length)
        const { file: seen } = await botClient.getFile({ id: file.id })
        assert.deepEqual(seen.owner, { type: 'user', id: init.user.id })
        assert.ok(Math.abs(Date.parse(seen.expiresAt) - Date.parse(expiresAt)) < 60_000, `expires ${seen.expiresAt}, asked ${expiresAt}`)

        // The user's file goes with them: exported, then erased with them.
        const auth = { authorization: `Bearer ${server.token}`, 'x-workspace-id': server.workspaceId }
        const exported = await (await fetch(`${server.apiUrl}/v1/admin/bots/${bot.id}/users/${init.user.id}/export`, { headers: auth })).json()
        assert.ok(JSON.stringify(exported).includes(file.id), 'the export holds the uploaded file')

        // Refusals: too big, a page or a script, indexing, more bytes than declared.
        await assert.rejects(client.createFile({ key: 'big.mp4', size: 26 * 1024 * 1024 }), (err) => {
          assert.match(err.message, /^size: a chat user's file is at most 26214400 bytes/)
          return true
        })
        for (const key of ['page.html', 'logo.svg', 'app.js']) {
          await assert.rejects(client.createFile({ key, size: 10 }), (err) => {
            assert.match(err.message, /^contentType: a chat user may not upload/, key)
            return true
          })
        }
        await assert.rejects(client.createFile({ key: 'x.txt', size: 10, contentType: 'text/html; charset=utf-8' }), /contentType/)
        await assert.rejects(client.createFile({ key: 'doc.pdf', size: 10, index: true }), /^Error: index|index: /)
        const { file: small } = await client.createFile({ key: 'note.txt', size: 4 })
        const over = await fetch(small.uploadUrl, { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: 'more than four bytes' })
        assert.equal(over.status, 413)
      } finally {
        w.sub.disconnect()
      }
    })

    test(`user keys made with the admin secret; refusals`, async () => {
      const { key } = await generateUserKey({ apiUrl, clientId, adminSecret: secret, userId: 'crm-42', expiresAt: Date.now() + 3_600_000 })
      const w = await open({ userToken: key })
      try {
        assert.equal(w.init.user.id, 'crm-42')

        // Another user's conversation is refused, in the standard error body.
        const other = await open()
        try {
          await other.client.createMessage({ conversationId: other.init.conversation.id, payload: { type: 'text', text: 'private' } })
          const res = await fetch(`${apiUrl}/${clientId}/initialize?conversationId=${other.init.conversation.id}`, {
            headers: { 'x-user-key': key, accept: 'text/event-stream' },
          })
          assert.equal(res.status, 403)
          const body = await res.json()
          assert.equal(body.type, 'Forbidden')
          assert.match(body.message, /not a participant/)
          // Naming a user needs the admin secret.
          const named = await fetch(`${apiUrl}/${clientId}/initialize?userId=crm-42`, { headers: { accept: 'text/event-stream' } })
          assert.equal(named.status, 401)
          assert.match((await named.json()).message, /^userId: /)
        } finally {
          other.sub.disconnect()
        }

        // Another user's message cannot be changed.
        const { message } = await w.client.createMessage({ conversationId: w.init.conversation.id, payload: { type: 'text', text: 'mine' } })
        const intruder = await open()
        try {
          await assert.rejects(intruder.client.updateMessage({ messageId: message.id, payload: { type: 'text', text: 'theirs' } }), (err) => {
            assert.match(err.message, /participant|sender/)
            return true
          })
          await assert.rejects(intruder.client.addMessageFeedback({ messageId: message.id, value: 'positive' }))
        } finally {
          intruder.sub.disconnect()
        }
        assert.equal((await w.client.getMessage({ messageId: message.id })).message.payload.text, 'mine')

        // A wrong admin secret, a bad key, a bad payload.
        await assert.rejects(generateUserKey({ apiUrl, clientId, adminSecret: 'nope', userId: 'crm-43', expiresAt: Date.now() + 60_000 }), (err) => {
          assert.match(err.message, /x-admin-secret/)
          return true
        })
        const bad = createClient({ apiUrl, clientId, userKey: 'not-a-key' })
        await assert.rejects(bad.getUser(), (err) => {
          assert.match(err.message, /Invalid user key/)
          return true
        })
        await assert.rejects(w.client.updateMessage({ messageId: message.id, payload: { type: 'image' } }), (err) => {
          assert.match(err.message, /payload/)
          return true
        })
        await assert.rejects(w.client.addMessageFeedback({ messageId: message.id, value: 'meh' }), (err) => {
          assert.match(err.message, /value/)
          return true
        })
      } finally {
        w.sub.disconnect()
      }
    })
  })

  // The webchat integration agents install (webchat@0.3.0): a webhook of its
  // own, whose conversations are the bot's webchat channel; the web chat's
  // events reach the bot as webchat:conversationStarted and webchat:trigger;
  // the bot answers with its actions (getUserData, show/hide/toggle,
  // configWebchat, customEvent).
  describe(`the webchat integration (${backend})`, () => {
    let server, admin, bot, apiUrl, clientId

    const agent = `bot.on.event('webchat:conversationStarted', async ({ event, client }) => {
  await client.createMessage({ conversationId: event.conversationId, payload: { type: 'text', text: 'welcome ' + event.payload.userId } })
})
bot.on.event('webchat:trigger', async ({ event, client }) => {
  const p = event.payload
  await client.createMessage({ conversationId: p.conversationId, payload: { type: 'text', text: 'trigger ' + p.origin + ' ' + p.userId + ' ' + JSON.stringify(p.payload) } })
})
bot.on.message('*', async ({ message, client }) => {
  const text = message.payload.text
  const conversationId = message.conversationId
  const say = (t) => client.createMessage({ conversationId, payload: { type: 'text', text: t } })
  if (text === 'data') {
    const { output } = await client.callAction({ type: 'webchat:getUserData', input: { userId: message.userId } })
    await say('data ' + JSON.stringify(output.userData))
  } else if (text === 'window') {
    await client.callAction({ type: 'webchat:showWebchat', input: { conversationId } })
    await client.callAction({ type: 'webchat:toggleWebchat', input: { conversationId } })
    await client.callAction({ type: 'webchat:configWebchat', input: { conversationId, config: JSON.stringify({ botName: 'Agent' }) } })
    await client.callAction({ type: 'webchat:customEvent', input: { conversationId, event: JSON.stringify({ kind: 'confetti' }) } })
    await client.callAction({ type: 'webchat:hideWebchat', input: { conversationId } })
  } else if (text === 'bad') {
    try {
      await client.callAction({ type: 'webchat:configWebchat', input: { conversationId, config: 'not json' } })
    } catch (err) {
      await say('refused ' + err.message)
    }
  }
})
`

    before(async () => {
      server = await startServer({ backend })
      admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
      ;({ bot } = await admin.createBot({ name: 'agent with the webchat', code: agent }))
      // As an agent's deployment installs it: the hub's definition, then the bot's integrations.
      const { integration } = await admin.getPublicIntegration({ name: 'webchat', version: '0.3.0' })
      assert.equal(integration.version, '0.3.0')
      assert.deepEqual(Object.keys(integration.events).sort(), ['conversationStarted', 'trigger'])
      assert.ok(integration.actions.getUserData && integration.actions.configWebchat)
      ;({ bot } = await admin.updateBot({ id: bot.id, integrations: { webchat: { integrationId: integration.id, enabled: true } } }))
      const webchat = bot.integrations.webchat
      assert.equal(webchat.status, 'registered')
      assert.notEqual(webchat.webhookId, bot.integrations.chat.webhookId)
      clientId = webchat.webhookId
      apiUrl = webchat.webhookUrl.slice(0, -(clientId.length + 1))
    })

    after(async () => {
      await server?.stop()
    })

    test(`conversations are the webchat channel; events and actions are the webchat integration's`, async () => {
      const sub = initialize({ apiUrl, clientId })
      const w = signals(sub)
      try {
        const init = await w.next('init')
        const client = createClient({ apiUrl, clientId, userKey: init.user.userKey })
        const conversationId = init.conversation.id
        const from = (text) => (m) => m.userId !== init.user.id && m.payload.text.startsWith(text)

        await client.createEvent({ conversationId, payload: { type: 'conversation_started', data: {} } })
        assert.equal((await w.next('message_created', from('welcome'))).payload.text, `welcome ${init.user.id}`)

        await client.createEvent({ conversationId, payload: { type: 'custom', data: { type: 'upsertAnalyzer', id: 'a1' } } })
        assert.equal((await w.next('message_created', from('trigger'))).payload.text,
          `trigger website ${init.user.id} {"type":"upsertAnalyzer","id":"a1"}`)

        // The bot sees the webchat channel, tagged with its user (the agent kit routes by integration.channel).
        const botClient = new Client({ apiUrl: server.apiUrl, token: server.token, botId: bot.id })
        const { conversation } = await botClient.getConversation({ id: conversationId })
        assert.equal(`${conversation.integration}.${conversation.channel}`, 'webchat.channel')
        assert.equal(conversation.tags['webchat:userId'], init.user.id)

        await client.updateUser({ userData: { email: 'ada@example.com', seats: 3 } })
        await client.createMessage({ conversationId, payload: { type: 'text', text: 'data' } })
        assert.equal((await w.next('message_created', from('data'))).payload.text, 'data {"email":"ada@example.com","seats":"3"}')

        await client.createMessage({ conversationId, payload: { type: 'text', text: 'window' } })
        assert.equal((await w.next('webchat_visibility')).visibility, 'show')
        assert.equal((await w.next('webchat_visibility')).visibility, 'toggle')
        assert.deepEqual((await w.next('webchat_config')).config, { botName: 'Agent' })
        assert.deepEqual((await w.next('custom')).event, { kind: 'confetti' })
        assert.equal((await w.next('webchat_visibility')).visibility, 'hide')

        await client.createMessage({ conversationId, payload: { type: 'text', text: 'bad' } })
        assert.match((await w.next('message_created', from('refused'))).payload.text, /input\.config: must be a JSON object/)

        // The official web chat's embed codes point at the webchat integration's webhook; the server's own widget stays on chat's.
        const code = async (widget) => {
          const res = await fetch(`${server.apiUrl}/v1/admin/bots/${bot.id}/webchat?type=sharableUrl${widget}`, {
            headers: { authorization: `Bearer ${server.token}`, 'x-workspace-id': server.workspaceId },
          })
          assert.equal(res.status, 200)
          return (await res.json()).code
        }
        const official = await code('&widget=official')
        assert.ok(official.endsWith(`/webchat/official/${clientId}`), official)
        assert.ok((await code('')).includes(bot.integrations.chat.webhookId))
        assert.equal((await fetch(official)).status, 200)

        // The bot's other channel does not see this conversation, nor this user's key.
        const chatHook = bot.integrations.chat.webhookId
        const res = await fetch(`${apiUrl}/${chatHook}/conversations/${conversationId}`, { headers: { 'x-user-key': init.user.userKey } })
        assert.ok(res.status === 401 || res.status === 404, `the chat webhook answered ${res.status}`)
        // The history the widget lists: conversations with their newest message.
        const { conversations } = await client.listConversations({})
        assert.deepEqual(conversations.map((c) => c.id), [conversationId])
        assert.match(conversations[0].lastMessage.payload.text, /^refused /)
        assert.notEqual(conversations[0].lastMessage.userId, init.user.id)
        const fresh = await openChat(apiUrl, clientId)
        try {
          const { conversations: none } = await fresh.client.listConversations({})
          assert.equal(none.length, 1)
          assert.equal(none[0].lastMessage, undefined, 'a conversation without messages has no lastMessage')
        } finally {
          fresh.sub.disconnect()
        }
      } finally {
        sub.disconnect()
      }
    })

    test(`the webchat integration is removed as agents remove it, and then its webhook is gone`, async () => {
      const { bot: without } = await admin.updateBot({ id: bot.id, integrations: { webchat: null } })
      assert.equal(without.integrations.webchat, undefined)
      assert.ok(without.integrations.chat)
      const res = await fetch(`${apiUrl}/${clientId}/users/me`, { headers: { 'x-user-key': 'x' } })
      assert.equal(res.status, 404)
    })
  })
}

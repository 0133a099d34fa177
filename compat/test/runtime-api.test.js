// Runtime API compatibility: a bot served elsewhere calls the bot-facing
// operations of @botpress/client with a bot API key (docs/runtime-api.md),
// on SQLite and on PostgreSQL.

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client as ChatClient } from '@botpress/chat'
import { Client, InvalidPayloadError, InvalidQueryError, ReferenceNotFoundError, ResourceNotFoundError, ForbiddenError } from '@botpress/client'
import { startServer, backends } from '../support/server.js'
import { newBot } from '../support/admin.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

for (const backend of backends()) {
  describe(`Runtime API (${backend})`, () => {
    let server, admin, bot, rt, other, otherKey

    before(async () => {
      server = await startServer({ backend })
      ;({ admin, bot, rt } = await newBot(server, 'runtime api'))
      const { bot: bot2 } = await admin.createBot({ name: 'another' })
      otherKey = (await admin.createBotApiKey({ botId: bot2.id })).value
      other = new Client({ apiUrl: server.apiUrl, token: otherKey, botId: bot2.id })
    })

    after(async () => {
      await server?.stop()
    })

    test('users: create, get-or-create by tags, get, update, list, delete', async () => {
      const { user } = await rt.createUser({ tags: { crm: '7' }, name: 'Ada' })
      assert.equal(user.name, 'Ada')
      assert.deepEqual(user.tags, { crm: '7' })
      const found = await rt.getOrCreateUser({ tags: { crm: '7', extra: 'x' }, discriminateByTags: ['crm'] })
      assert.equal(found.user.id, user.id)
      assert.equal(found.meta.created, false)
      const made = await rt.getOrCreateUser({ tags: { crm: '8' } })
      assert.equal(made.meta.created, true)
      assert.deepEqual((await rt.getUser({ id: user.id })).user, user)
      const { user: updated } = await rt.updateUser({ id: user.id, tags: { crm: '', plan: 'pro' }, pictureUrl: 'https://example.test/p.png' })
      assert.deepEqual(updated.tags, { plan: 'pro' })
      assert.equal(updated.pictureUrl, 'https://example.test/p.png')
      const { users } = await rt.listUsers({ tags: { plan: 'pro' } })
      assert.deepEqual(users.map((u) => u.id), [user.id])
      const all = await rt.list.users({}).collect()
      assert.deepEqual(all.map((u) => u.id).sort(), [user.id, made.user.id].sort())
      await rt.deleteUser({ id: made.user.id })
      await assert.rejects(rt.getUser({ id: made.user.id }), ResourceNotFoundError)
    })

    test('official fields of older and newer SDKs: integrationName, properties and attributes are kept', async () => {
      const { user } = await rt.createUser({ tags: {}, integrationName: 'chat', properties: { shared: 'a' }, attributes: { tier: 'gold' } })
      assert.deepEqual(user.properties, { shared: 'a' })
      assert.deepEqual(user.attributes, { tier: 'gold' })
      const { user: updated } = await rt.updateUser({ id: user.id, properties: { shared: null, seen: '1' }, attributes: { tier: 'silver' } })
      assert.deepEqual(updated.properties, { seen: '1' })
      assert.deepEqual(updated.attributes, { tier: 'silver' })
      assert.deepEqual((await rt.getUser({ id: user.id })).user, updated)
      const made = await rt.getOrCreateUser({ tags: { crm: 'p1' }, integrationName: 'chat', attributes: { a: 'b' } })
      assert.deepEqual(made.user.attributes, { a: 'b' })

      // A bot of an older SDK creates the conversations of an integration
      // itself (bots/bugbuster: linear's issues).
      const { conversation } = await rt.getOrCreateConversation({
        integrationName: 'linear', channel: 'issue', tags: { 'linear:id': 'ISS-1' }, properties: { state: 'open' },
      })
      assert.equal(conversation.integration, 'linear')
      assert.deepEqual(conversation.properties, { state: 'open' })
      const again = await rt.getOrCreateConversation({ integrationName: 'linear', channel: 'issue', tags: { 'linear:id': 'ISS-1' } })
      assert.equal(again.conversation.id, conversation.id)
      const chat = await rt.getOrCreateConversation({ channel: 'issue', tags: { 'linear:id': 'ISS-1' } })
      assert.notEqual(chat.conversation.id, conversation.id, 'a conversation of another integration is not found')
      assert.equal(chat.conversation.integration, 'chat')
      const { conversation: changed } = await rt.updateConversation({ id: conversation.id, properties: { state: 'closed' } })
      assert.deepEqual(changed.properties, { state: 'closed' })
      const { conversations } = await rt.listConversations({ integrationName: 'linear' })
      assert.deepEqual(conversations, [changed])
      const created = await rt.createConversation({ channel: 'web', tags: {}, integrationName: 'telegram', properties: { p: 'q' } })
      assert.equal(created.conversation.integration, 'telegram')
      assert.deepEqual((await rt.getConversation({ id: created.conversation.id })).conversation.properties, { p: 'q' })
    })

    test('conversations and participants', async () => {
      const { conversation } = await rt.createConversation({ channel: 'web', tags: { topic: 'billing' } })
      assert.equal(conversation.channel, 'web')
      assert.equal(conversation.integration, 'chat')
      assert.equal(conversation.messageCount, 0)
      const again = await rt.getOrCreateConversation({ channel: 'web', tags: { topic: 'billing' }, discriminateByTags: ['topic'] })
      assert.equal(again.conversation.id, conversation.id)
      assert.equal(again.meta.created, false)
      const { conversation: updated } = await rt.updateConversation({ id: conversation.id, tags: { topic: '', lang: 'fr' } })
      assert.deepEqual(updated.tags, { lang: 'fr' })
      const { user } = await rt.createUser({ tags: {} })
      const { participant } = await rt.addParticipant({ id: conversation.id, userId: user.id })
      assert.equal(participant.id, user.id)
      assert.equal((await rt.getParticipant({ id: conversation.id, userId: user.id })).participant.id, user.id)
      const { participants } = await rt.listParticipants({ id: conversation.id })
      assert.ok(participants.some((p) => p.id === user.id))
      const { conversations } = await rt.listConversations({ participantIds: [user.id] })
      assert.deepEqual(conversations.map((c) => c.id), [conversation.id])
      const byTag = await rt.listConversations({ tags: { lang: 'fr' } })
      assert.deepEqual(byTag.conversations.map((c) => c.id), [conversation.id])
      await rt.removeParticipant({ id: conversation.id, userId: user.id })
      await assert.rejects(rt.getParticipant({ id: conversation.id, userId: user.id }), ResourceNotFoundError)
      await rt.deleteConversation({ id: conversation.id })
      await assert.rejects(rt.getConversation({ id: conversation.id }), ResourceNotFoundError)
    })

    test('a message the bot creates reaches the chat user, then is listed, updated and deleted', async () => {
      const chat = await ChatClient.connect({ apiUrl: bot.integrations.chat.webhookUrl })
      const { conversation } = await chat.createConversation({})
      const listener = await chat.listenConversation({ id: conversation.id })
      try {
        const received = new Promise((resolve, reject) => {
          listener.on('message_created', (m) => m.isBot && resolve(m))
          listener.on('error', reject)
        })
        const { message } = await rt.createMessage({
          conversationId: conversation.id, userId: bot.id, type: 'text', payload: { text: 'proactive hello' }, tags: { kind: 'greeting' },
        })
        assert.equal(message.direction, 'outgoing')
        assert.deepEqual(message.payload, { text: 'proactive hello' })
        const signal = await received
        assert.equal(signal.id, message.id)
        assert.deepEqual(signal.payload, { type: 'text', text: 'proactive hello' })
        const { messages } = await rt.listMessages({ conversationId: conversation.id, tags: { kind: 'greeting' } })
        assert.deepEqual(messages, [message])
        const same = await rt.getOrCreateMessage({
          conversationId: conversation.id, userId: bot.id, type: 'text', payload: { text: 'twice?' }, tags: { kind: 'greeting' }, discriminateByTags: ['kind'],
        })
        assert.equal(same.message.id, message.id)
        const { message: edited } = await rt.updateMessage({ id: message.id, payload: { text: 'edited' }, tags: {} })
        assert.deepEqual(edited.payload, { text: 'edited' })
        assert.deepEqual((await rt.getMessage({ id: message.id })).message, edited)
        await rt.deleteMessage({ id: message.id })
        await assert.rejects(rt.getMessage({ id: message.id }), ResourceNotFoundError)
      } finally {
        await listener.disconnect()
        listener.cleanup()
      }
    })

    test('importMessages keeps dates and runs again without duplicates; listTagValues', async () => {
      const { user } = await rt.createUser({ tags: { src: 'legacy' } })
      const { conversation } = await rt.createConversation({ channel: 'import', tags: {} })
      const createdAt = new Date(Date.now() - 86_400_000).toISOString()
      const messages = [
        { conversationId: conversation.id, userId: user.id, type: 'text', payload: { text: 'old' }, tags: { legacyId: 'a' }, createdAt, discriminateByTags: ['legacyId'] },
      ]
      const first = await rt.importMessages({ messages })
      assert.equal(first.messages[0].createdAt, createdAt)
      assert.equal(first.messages[0].direction, 'incoming')
      const second = await rt.importMessages({ messages })
      assert.deepEqual(second.messages, first.messages)
      assert.equal((await rt.getConversation({ id: conversation.id })).conversation.messageCount, 1)
      const { tags } = await rt.listTagValues({ key: 'src', type: 'user' })
      assert.deepEqual(tags, [{ value: 'legacy' }])
    })

    test('states: set, get, get-or-set, patch, expiry; declared schemas are enforced', async () => {
      const { conversation } = await rt.createConversation({ channel: 'web', tags: {} })
      const key = { type: 'conversation', id: conversation.id, name: 'progress' }
      await assert.rejects(rt.getState(key), ResourceNotFoundError)
      const { state } = await rt.setState({ ...key, payload: { step: 1 } })
      assert.equal(state.conversationId, conversation.id)
      assert.deepEqual((await rt.getState(key)).state, state)
      const kept = await rt.getOrSetState({ ...key, payload: { step: 9 } })
      assert.deepEqual(kept.state.payload, { step: 1 })
      const { state: patched } = await rt.patchState({ ...key, payload: { done: true } })
      assert.deepEqual(patched.payload, { step: 1, done: true })
      const { state: expiring } = await rt.setStateExpiry({ ...key, expiry: 60_000 })
      assert.equal(expiring.expiry, 60_000)
      assert.ok(new Date(expiring.expiresAt) > new Date())
      await assert.rejects(rt.getState({ type: 'session', id: 'x', name: 'y' }), InvalidPayloadError)

      await admin.updateBot({ id: bot.id, states: { profile: { type: 'user', schema: { type: 'object', properties: { age: { type: 'integer' } } } } } })
      const { user } = await rt.createUser({ tags: {} })
      await rt.setState({ type: 'user', id: user.id, name: 'profile', payload: { age: 3 } })
      await assert.rejects(rt.setState({ type: 'user', id: user.id, name: 'profile', payload: { age: 'three' } }), InvalidPayloadError)
      await assert.rejects(other.getState({ type: 'user', id: user.id, name: 'profile' }), ResourceNotFoundError)
      assert.deepEqual((await rt.getState({ type: 'user', id: user.id, name: 'profile' })).state.payload, { age: 3 })
    })

    test('events: create, get, list, cancel a scheduled one', async () => {
      const { conversation } = await rt.createConversation({ channel: 'web', tags: {} })
      const { event: later } = await rt.createEvent({ type: 'reminder', payload: { n: 1 }, conversationId: conversation.id, schedule: { delay: 3_600_000 } })
      assert.equal(later.status, 'scheduled')
      assert.equal(later.failureReason, null)
      const { events } = await rt.listEvents({ status: 'scheduled' })
      assert.deepEqual(events.map((e) => e.id), [later.id])
      await rt.cancelScheduledEvent({ id: later.id })
      assert.equal((await rt.getEvent({ id: later.id })).event.status, 'canceled')
      await assert.rejects(rt.cancelScheduledEvent({ id: later.id }), InvalidPayloadError)
      await assert.rejects(other.getEvent({ id: later.id }), ResourceNotFoundError)
      // This bot has no code: an event due now ends ignored.
      const { event: now } = await rt.createEvent({ type: 'ping', payload: {} })
      const deadline = Date.now() + 30_000
      let status = now.status
      while (status === 'pending' && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50))
        status = (await rt.getEvent({ id: now.id })).event.status
      }
      assert.equal(status, 'ignored')
    })

    test('workflows: create, get, get-or-create, update, list, delete', async () => {
      const { workflow } = await rt.createWorkflow({ name: 'onboard', status: 'in_progress', input: { a: 1 }, tags: { k: 'v' } })
      assert.equal(workflow.status, 'in_progress')
      assert.deepEqual(workflow.input, { a: 1 })
      assert.deepEqual((await rt.getWorkflow({ id: workflow.id })).workflow, workflow)
      const found = await rt.getOrCreateWorkflow({ name: 'onboard', status: 'pending', tags: { k: 'v' }, discriminateByTags: ['k'] })
      assert.equal(found.workflow.id, workflow.id)
      assert.equal(found.meta.created, false)
      const { workflow: done } = await rt.updateWorkflow({ id: workflow.id, status: 'completed', output: { ok: true }, tags: { k: null } })
      assert.equal(done.status, 'completed')
      assert.ok(done.completedAt)
      assert.deepEqual(done.tags, {})
      const { workflows } = await rt.listWorkflows({ statuses: ['completed'], name: 'onboard' })
      assert.deepEqual(workflows.map((w) => w.id), [workflow.id])
      await assert.rejects(rt.updateWorkflow({ id: workflow.id, status: 'in_progress' }), InvalidPayloadError)
      await assert.rejects(other.getWorkflow({ id: workflow.id }), ResourceNotFoundError)
      await rt.deleteWorkflow({ id: workflow.id })
      await assert.rejects(rt.getWorkflow({ id: workflow.id }), ResourceNotFoundError)
    })

    test('trackAnalytics, captureObservation, introspect', async () => {
      await rt.trackAnalytics({ name: 'signup', count: 3 })
      const now = new Date()
      const { records } = await admin.getBotAnalytics({ id: bot.id, startDate: new Date(now - 3600_000).toISOString(), endDate: now.toISOString() })
      assert.equal(records.at(-1).customEvents.signup, 3)
      await assert.rejects(rt.trackAnalytics({ name: 'signup', count: 0.5 }), InvalidPayloadError)
      const { conversation } = await rt.createConversation({ channel: 'web', tags: {} })
      await rt.captureObservation({ name: 'step', data: { ms: 5 }, conversationId: conversation.id })
      const { logs } = await admin.getBotLogs({ id: bot.id, timeStart: new Date(now - 3600_000).toISOString(), conversationId: conversation.id })
      assert.ok(logs.some((l) => l.message.startsWith('observation step: {"ms":5}')), JSON.stringify(logs))
      const me = await rt.introspect({ botId: bot.id })
      assert.deepEqual(me, { workspaceId: server.workspaceId, botId: bot.id, userId: bot.id })
      await assert.rejects(other.introspect({ botId: bot.id }), ForbiddenError)
    })

    test('bad input is refused with the right error type', async () => {
      const { conversation } = await rt.createConversation({ channel: 'web', tags: {} })
      await assert.rejects(rt.createConversation({ tags: {} }), InvalidPayloadError)
      await assert.rejects(
        rt.createMessage({ conversationId: conversation.id, userId: bot.id, type: 'text', payload: {}, tags: {} }),
        InvalidPayloadError
      )
      await assert.rejects(
        rt.createMessage({ conversationId: conversation.id, userId: 'nobody', type: 'text', payload: { text: 'x' }, tags: {} }),
        ReferenceNotFoundError
      )
      await assert.rejects(rt.listUsers({ sortField: 'name' }), InvalidQueryError)
      await assert.rejects(rt.listTagValues({ key: 'k', type: 'bot' }), InvalidQueryError)
      await assert.rejects(rt.getOrCreateUser({ tags: { a: '1' }, discriminateByTags: ['b'] }), InvalidPayloadError)
    })

    test("another bot's key reaches none of this bot's data", async () => {
      const { user } = await rt.createUser({ tags: {} })
      const { conversation } = await rt.createConversation({ channel: 'web', tags: {} })
      const { message } = await rt.createMessage({ conversationId: conversation.id, userId: bot.id, type: 'text', payload: { text: 'mine' }, tags: {} })
      for (const call of [
        () => other.getUser({ id: user.id }),
        () => other.updateUser({ id: user.id, name: 'x' }),
        () => other.deleteUser({ id: user.id }),
        () => other.getConversation({ id: conversation.id }),
        () => other.deleteConversation({ id: conversation.id }),
        () => other.addParticipant({ id: conversation.id, userId: user.id }),
        () => other.getMessage({ id: message.id }),
        () => other.updateMessage({ id: message.id, tags: { x: 'y' } }),
        () => other.deleteMessage({ id: message.id }),
        () => other.listMessages({ conversationId: conversation.id }),
      ]) {
        await assert.rejects(call(), ResourceNotFoundError)
      }
      const wrongBot = new Client({ apiUrl: server.apiUrl, token: otherKey, botId: bot.id })
      await assert.rejects(wrongBot.getUser({ id: user.id }), ForbiddenError)
      assert.equal((await rt.getMessage({ id: message.id })).message.id, message.id)
    })
  })
}

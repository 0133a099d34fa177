// Chat API compatibility: drives the server only through the official
// @botpress/chat 0.5.5 client (the bot itself is created with
// @botpress/client 1.45.0), and checks what the client's types, zod signal
// schemas and error handling rely on (compat-notes §1, spec 2.2, 2.3, 4.2, 4.3).

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import crypto from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import {
  Client,
  AuthenticatedClient,
  ChatClientError,
  isApiError,
  AlreadyExistsError,
  ForbiddenError,
  InvalidPayloadError,
  PayloadTooLargeError,
  ResourceNotFoundError,
  UnauthorizedError,
} from '@botpress/chat'
import { Client as AdminClient } from '@botpress/client'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const PING_INTERVAL = '1s'

let server
let admin // @botpress/client on the bootstrap workspace
let bot // the bot whose chat integration is under test
let apiUrl // bot.integrations.chat.webhookUrl
let encryptionKey // bot.integrations.chat.configuration.encryptionKey

// Every listener a test opens, so that none keeps the process alive.
const openListeners = new Set()

before(async () => {
  server = await startServer({ args: ['--sse-ping-interval', PING_INTERVAL] })
  admin = new AdminClient({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  ;({ bot } = await admin.createBot({ name: 'chat compat bot' }))
  const chat = bot.integrations.chat
  assert.ok(chat, `the bot has no "chat" integration: ${JSON.stringify(Object.keys(bot.integrations))}`)
  apiUrl = chat.webhookUrl
  encryptionKey = chat.configuration.encryptionKey
  assert.equal(typeof apiUrl, 'string')
  assert.equal(typeof encryptionKey, 'string')
  assert.ok(encryptionKey.length > 0, 'the chat integration must have an encryption key')
})

after(async () => {
  for (const l of openListeners) await l.disconnect().catch(() => {})
  await server?.stop()
})

// ---------------------------------------------------------------- helpers

// zod datetime() (compat-notes §1.8): UTC with Z only.
const ISO_Z_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?Z$/
const ERROR_ID_RE = /^err_/

function assertDateZ(value, what) {
  assert.equal(typeof value, 'string', `${what} must be a string, got ${JSON.stringify(value)}`)
  assert.match(value, ISO_Z_RE, `${what} must be an ISO 8601 UTC date ending in Z, got ${value}`)
  assert.ok(!Number.isNaN(Date.parse(value)), `${what} must parse as a date`)
}

function assertUser(u, what = 'user') {
  assert.ok(u && typeof u === 'object', `${what} must be an object`)
  assert.equal(typeof u.id, 'string', `${what}.id`)
  assert.ok(u.id.length > 0, `${what}.id must not be empty`)
  assertDateZ(u.createdAt, `${what}.createdAt`)
  assertDateZ(u.updatedAt, `${what}.updatedAt`)
  for (const f of ['name', 'pictureUrl', 'profile']) {
    if (u[f] !== undefined) assert.equal(typeof u[f], 'string', `${what}.${f}`)
  }
  assert.ok(!('code' in u), `${what} must not carry a top-level code`)
}

function assertConversation(c, what = 'conversation') {
  assert.ok(c && typeof c === 'object', `${what} must be an object`)
  assert.deepEqual(Object.keys(c).sort(), ['createdAt', 'id', 'updatedAt'], `${what} fields`)
  assert.equal(typeof c.id, 'string')
  assertDateZ(c.createdAt, `${what}.createdAt`)
  assertDateZ(c.updatedAt, `${what}.updatedAt`)
}

function assertMessage(m, what = 'message') {
  assert.ok(m && typeof m === 'object', `${what} must be an object`)
  for (const k of Object.keys(m)) {
    assert.ok(['id', 'createdAt', 'payload', 'userId', 'conversationId', 'metadata'].includes(k), `${what} has an unexpected field ${k}`)
  }
  assert.equal(typeof m.id, 'string')
  assertDateZ(m.createdAt, `${what}.createdAt`)
  assert.equal(typeof m.payload?.type, 'string', `${what}.payload.type`)
  assert.equal(typeof m.userId, 'string')
  assert.equal(typeof m.conversationId, 'string')
  if (m.metadata !== undefined) assert.ok(m.metadata && typeof m.metadata === 'object', `${what}.metadata must be an object`)
  assert.ok(!('metadata' in m.payload), `${what}.payload must not contain metadata (compat-notes §1.6)`)
}

/**
 * Awaits promise, which must reject with an API error of class ErrorClass
 * and wire type `type`. The client picks the class from the body's `type`
 * and throws UnknownError when id, code, type or message is missing
 * (compat-notes §0), so the class check also proves the body is complete.
 */
async function rejectsWith(promise, ErrorClass, type) {
  let err
  try {
    await promise
  } catch (e) {
    err = e
  }
  const want = `${type}Error`
  assert.ok(err, `expected ${want}, but the call succeeded`)
  assert.ok(isApiError(err), `expected an API error (${want}), got ${err?.stack ?? err}`)
  assert.ok(err instanceof ErrorClass, `expected ${want}, got type=${err.type} code=${err.code}: ${err.message}`)
  assert.equal(err.type, type)
  assert.equal(typeof err.id, 'string')
  assert.match(err.id, ERROR_ID_RE, `error id ${err.id} must start with err_`)
  assert.equal(typeof err.message, 'string')
  assert.ok(err.message.length > 0, 'error message must not be empty')
  return err
}

/** A new chat user through Client.connect (createUser unless props say otherwise). */
async function connect(props = {}) {
  const c = await Client.connect({ apiUrl, ...props })
  assert.ok(c instanceof AuthenticatedClient, 'Client.connect must return an AuthenticatedClient')
  return c
}

/** A conversation owned by owner, with the other clients as participants. */
async function conversationWith(owner, ...others) {
  const { conversation } = await owner.createConversation({})
  for (const o of others) await owner.addParticipant({ conversationId: conversation.id, userId: o.user.id })
  return conversation
}

function decodeJwtPart(part) {
  return JSON.parse(Buffer.from(part, 'base64url').toString('utf8'))
}

/** HS256 JWT {id, iat} signed with secret, as jsonwebtoken would (the client signs this way). */
function signJwt(payload, secret) {
  const head = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url')
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url')
  const sig = crypto.createHmac('sha256', secret).update(`${head}.${body}`).digest('base64url')
  return `${head}.${body}.${sig}`
}

const SIGNAL_TYPES = ['message_created', 'event_created', 'participant_added', 'participant_removed', 'message_deleted', 'unknown']

/**
 * Opens a listener and records everything it emits:
 * rec.signals [{type, data}], rec.errors [Error], rec.waitFor(pred, what).
 */
async function listen(client, id) {
  const listener = await client.listenConversation({ id })
  openListeners.add(listener)
  const rec = { listener, signals: [], errors: [], notify: new Set() }
  const notify = () => {
    for (const f of rec.notify) f()
  }
  for (const t of SIGNAL_TYPES) {
    listener.on(t, (data) => {
      rec.signals.push({ type: t, data })
      notify()
    })
  }
  listener.on('error', (e) => {
    rec.errors.push(e)
    notify()
  })
  /** Resolves with the first recorded signal matching pred (type, data). */
  rec.waitFor = (pred, what, ms = 5000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        const hit = rec.signals.find((s) => pred(s.type, s.data))
        if (hit) {
          cleanup()
          resolve(hit.data)
        }
      }
      const timer = setTimeout(() => {
        cleanup()
        const seen = rec.signals.filter((s) => !(s.type === 'unknown' && s.data === 'ping'))
        reject(new Error(`timed out after ${ms} ms waiting for ${what}; got ${JSON.stringify(seen)} errors=${rec.errors.map((e) => e.message)}`))
      }, ms)
      const cleanup = () => {
        clearTimeout(timer)
        rec.notify.delete(check)
      }
      rec.notify.add(check)
      check()
    })
  rec.waitError = (ms = 5000) =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (rec.errors.length) {
          cleanup()
          resolve(rec.errors[0])
        }
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`timed out after ${ms} ms waiting for the listener to fail (status ${listener.status})`))
      }, ms)
      const cleanup = () => {
        clearTimeout(timer)
        rec.notify.delete(check)
      }
      rec.notify.add(check)
      check()
    })
  /** Signals other than pings. */
  rec.real = () => rec.signals.filter((s) => !(s.type === 'unknown' && s.data === 'ping'))
  rec.close = async () => {
    await listener.disconnect()
    openListeners.delete(listener)
  }
  return rec
}

/** listenConversation must reject; returns the raw rejection value. */
async function listenRejects(client, id) {
  let listener
  try {
    listener = await client.listenConversation({ id })
  } catch (e) {
    return e
  }
  openListeners.add(listener)
  assert.fail(`listenConversation({id: ${JSON.stringify(id)}}) should have been refused, but the stream opened`)
}

/** A valid payload of every type of compat-notes §1.6, free of extra keys (zod would strip them in signals). */
const VALID_PAYLOADS = {
  text: { type: 'text', text: 'hello' },
  markdown: { type: 'markdown', markdown: '**bold**' },
  image: { type: 'image', imageUrl: 'https://example.com/a.png' },
  audio: { type: 'audio', audioUrl: 'https://example.com/a.mp3' },
  video: { type: 'video', videoUrl: 'https://example.com/a.mp4' },
  file: { type: 'file', fileUrl: 'https://example.com/a.pdf', title: 'A PDF' },
  'file without title': { type: 'file', fileUrl: 'https://example.com/b.pdf' },
  location: { type: 'location', latitude: 45.5, longitude: -73.56, address: '1 Main St', title: '' },
  'location without optional fields': { type: 'location', latitude: 0, longitude: 0 },
  card: {
    type: 'card',
    title: 'Card',
    subtitle: 'Sub',
    imageUrl: 'https://example.com/c.png',
    actions: [
      { action: 'postback', label: 'Yes', value: 'yes' },
      { action: 'url', label: 'Open', value: 'https://example.com' },
      { action: 'say', label: 'Say', value: 'hi' },
    ],
  },
  'card without actions': { type: 'card', title: 'Bare', actions: [] },
  carousel: {
    type: 'carousel',
    items: [
      { type: 'card', title: 'One', actions: [{ action: 'postback', label: 'Pick', value: '1' }] },
      { type: 'card', title: 'Two', subtitle: 'second', actions: [] },
    ],
  },
  choice: { type: 'choice', text: 'Pick one', options: [{ label: 'A', value: 'a' }, { label: 'B', value: 'b' }] },
  dropdown: { type: 'dropdown', text: 'Choose', options: [{ label: 'X', value: 'x' }] },
  bloc: {
    type: 'bloc',
    items: [
      { type: 'text', text: 't' },
      { type: 'markdown', markdown: '*m*' },
      { type: 'image', imageUrl: 'https://example.com/i.png' },
      { type: 'audio', audioUrl: 'https://example.com/i.mp3' },
      { type: 'video', videoUrl: 'https://example.com/i.mp4' },
      { type: 'file', fileUrl: 'https://example.com/i.pdf', title: 'f' },
      { type: 'location', latitude: 1.5, longitude: 2.5 },
    ],
  },
}

const INVALID_PAYLOADS = {
  'empty text': { type: 'text', text: '' },
  'text without text': { type: 'text' },
  'empty markdown': { type: 'markdown', markdown: '' },
  'image without imageUrl': { type: 'image' },
  'empty audioUrl': { type: 'audio', audioUrl: '' },
  'video without videoUrl': { type: 'video' },
  'file with empty title': { type: 'file', fileUrl: 'https://example.com/a.pdf', title: '' },
  'location without longitude': { type: 'location', latitude: 1 },
  'location with a string latitude': { type: 'location', latitude: '1', longitude: 2 },
  'card action with empty label': { type: 'card', title: 'T', actions: [{ action: 'postback', label: '', value: 'v' }] },
  'card action with an unknown action': { type: 'card', title: 'T', actions: [{ action: 'call', label: 'l', value: 'v' }] },
  'card without actions field': { type: 'card', title: 'T' },
  'card with empty title': { type: 'card', title: '', actions: [] },
  'carousel item without type card': { type: 'carousel', items: [{ title: 'T', actions: [] }] },
  'choice option with empty value': { type: 'choice', text: 'Q', options: [{ label: 'a', value: '' }] },
  'dropdown without options': { type: 'dropdown', text: 'Q' },
  'bloc with a card item': { type: 'bloc', items: [{ type: 'card', title: 'T', actions: [] }] },
  'bloc with an empty text item': { type: 'bloc', items: [{ type: 'text', text: '' }] },
  'unknown type': { type: 'sticker', stickerUrl: 'https://example.com/s.png' },
  'no type': { text: 'hello' },
}

// ---------------------------------------------------------------- probe

describe('connection probe (compat-notes §1.2)', () => {
  test('a Client on an unknown webhook id fails with ChatClientError "Failed to connect"', async () => {
    const unknown = new URL(apiUrl)
    unknown.pathname = unknown.pathname.replace(/[^/]+$/, 'no-such-webhook-0000')
    const c = new Client({ apiUrl: unknown.toString() })
    let err
    try {
      await c.createUser({})
    } catch (e) {
      err = e
    }
    assert.ok(err, 'createUser on an unknown webhook should fail')
    assert.ok(err instanceof ChatClientError, `expected ChatClientError, got ${err?.stack ?? err}`)
    assert.match(err.message, /Failed to connect/)
    await assert.rejects(Client.connect({ apiUrl: unknown.toString() }), (e) => e instanceof ChatClientError && /Failed to connect/.test(e.message))
  })

  test('a Client on the bot webhook works, by apiUrl and by webhookId + baseApiUrl', async () => {
    const { user, key } = await new Client({ apiUrl }).createUser({})
    assertUser(user)
    assert.equal(typeof key, 'string')

    const chat = bot.integrations.chat
    const baseApiUrl = apiUrl.slice(0, apiUrl.length - chat.webhookId.length - 1)
    assert.equal(`${baseApiUrl}/${chat.webhookId}`, apiUrl, 'webhookUrl should be {chatUrl}/{webhookId}')
    const viaId = new Client({ webhookId: chat.webhookId, baseApiUrl })
    const { user: u2 } = await viaId.getUser({ 'x-user-key': key })
    assert.deepEqual(u2, user)
  })

  test('a disabled chat integration fails the probe', async () => {
    const { bot: other } = await admin.createBot({ name: 'disabled chat' })
    const url = other.integrations.chat.webhookUrl
    await connect({ apiUrl: url }) // works while enabled
    await admin.updateBot({ id: other.id, integrations: { chat: { enabled: false } } })
    await assert.rejects(Client.connect({ apiUrl: url }), (e) => e instanceof ChatClientError && /Failed to connect/.test(e.message))
  })
})

// ---------------------------------------------------------------- connect and keys

describe('Client.connect and user keys (compat-notes §1.3)', () => {
  test('no key and no userId: createUser with a generated id and a server-signed HS256 key', async () => {
    const c = await connect()
    assertUser(c.user)
    assert.equal(typeof c.user.key, 'string')
    const [head, body, sig] = c.user.key.split('.')
    assert.ok(sig, 'the key must be a JWT')
    assert.equal(decodeJwtPart(head).alg, 'HS256')
    const claims = decodeJwtPart(body)
    assert.equal(claims.id, c.user.id, 'the JWT id claim must be the user id the client sees')
    const expected = crypto.createHmac('sha256', encryptionKey).update(`${head}.${body}`).digest('base64url')
    assert.equal(sig, expected, 'the server-issued key must be signed with the chat encryption key')
    const { user } = await c.getUser({})
    const { key, ...connected } = c.user
    assert.deepEqual(user, connected, 'getUser must return the user connect() received')
  })

  test('no key with a userId: createUser with that id', async () => {
    const id = `user_${crypto.randomUUID().replaceAll('-', '')}`.slice(0, 28)
    const c = await connect({ userId: id })
    assert.equal(c.user.id, id)
    assert.equal(decodeJwtPart(c.user.key.split('.')[1]).id, id)
    const { user } = await c.getUser({})
    assert.equal(user.id, id)
  })

  test('{ userKey }: getOrCreateUser with a server-issued key returns the same user', async () => {
    const first = await connect({ userId: 'userkey-mode-user' })
    const again = await connect({ userKey: first.user.key })
    assert.equal(again.user.key, first.user.key)
    assert.equal(again.user.id, first.user.id)
    assert.equal(again.user.createdAt, first.user.createdAt)
    // Both clients act as the same user.
    const conv = await conversationWith(first)
    const { conversation } = await again.getConversation({ id: conv.id })
    assert.equal(conversation.id, conv.id)
  })

  test(
    '{ userId, encryptionKey }: the client signs its own key and the user is created',
    async () => {
      const userId = `self-signed-${crypto.randomUUID().slice(0, 8)}`
      const c = await connect({ userId, encryptionKey })
      assertUser(c.user)
      assert.equal(c.user.id, userId)
      const { user } = await c.getUser({})
      assert.equal(user.id, userId)
    }
  )

  test('getOrCreateUser with a new id in the key creates the user (raw client call)', async () => {
    const userId = `goc-new-${crypto.randomUUID().slice(0, 8)}`
    const key = signJwt({ id: userId, iat: Math.floor(Date.now() / 1000) }, encryptionKey)
    const { user } = await new Client({ apiUrl }).getOrCreateUser({ 'x-user-key': key, name: 'Fresh' })
    assertUser(user)
    assert.equal(user.id, userId)
    assert.equal(user.name, 'Fresh')
  })

  test('{ userId, encryptionKey }: a client-signed key reaches the same user every time', async () => {
    const userId = `self-signed-${crypto.randomUUID().slice(0, 8)}`
    // Created through createUser first, so this test does not depend on the bug above.
    const made = await connect({ userId })
    const c = await connect({ userId, encryptionKey })
    assertUser(c.user)
    assert.equal(c.user.id, userId)
    assert.notEqual(c.user.key, made.user.key, 'connect signs its own key (it carries iat)')
    assert.equal(decodeJwtPart(c.user.key.split('.')[1]).id, userId)
    const { user } = await c.getUser({})
    assert.equal(user.id, userId)
    assert.equal(user.createdAt, made.user.createdAt)
    const again = await connect({ userId, encryptionKey })
    assert.equal(again.user.id, userId)
    assert.equal(again.user.createdAt, made.user.createdAt)
    // A key signed here (as jsonwebtoken does) names the same user.
    const viaJwt = await connect({ userKey: signJwt({ id: userId, iat: Math.floor(Date.now() / 1000) }, encryptionKey) })
    assert.equal(viaJwt.user.createdAt, made.user.createdAt)
    // Both kinds of key act as the same user.
    const conv = await conversationWith(made)
    const { conversation } = await c.getConversation({ id: conv.id })
    assert.equal(conversation.id, conv.id)
    await rejectsWith(new Client({ apiUrl }).createUser({ id: userId }), AlreadyExistsError, 'AlreadyExists')
  })

  test('a user created by createUser can be reached with a client-signed key', async () => {
    const made = await connect({ userId: 'made-by-create-user' })
    const signed = await connect({ userId: 'made-by-create-user', encryptionKey })
    assert.equal(signed.user.id, made.user.id)
    assert.equal(signed.user.createdAt, made.user.createdAt)
  })

  test('a key signed with a wrong secret is refused with UnauthorizedError', async () => {
    const err = await rejectsWith(
      Client.connect({ apiUrl, userId: 'wrong-secret-user', encryptionKey: 'not-the-bot-encryption-key-at-all' }),
      UnauthorizedError,
      'Unauthorized'
    )
    assert.equal(err.code, 401)
    // The user was not created by the refused attempt.
    await connect({ userId: 'wrong-secret-user' })
  })

  test('a malformed key, or a valid one used on a non-creating operation for no user, is Unauthorized', async () => {
    await rejectsWith(Client.connect({ apiUrl, userKey: 'not-a-jwt' }), UnauthorizedError, 'Unauthorized')
    const anon = new Client({ apiUrl })
    await rejectsWith(anon.getUser({ 'x-user-key': 'not-a-jwt' }), UnauthorizedError, 'Unauthorized')
    const ghost = signJwt({ id: 'never-created-user', iat: 1 }, encryptionKey)
    await rejectsWith(anon.getUser({ 'x-user-key': ghost }), UnauthorizedError, 'Unauthorized')
    await rejectsWith(anon.createConversation({ 'x-user-key': ghost }), UnauthorizedError, 'Unauthorized')
    // A key with alg none is never accepted.
    const none = `${Buffer.from('{"alg":"none","typ":"JWT"}').toString('base64url')}.${Buffer.from('{"id":"made-by-create-user"}').toString('base64url')}.`
    await rejectsWith(anon.getUser({ 'x-user-key': none }), UnauthorizedError, 'Unauthorized')
  })

  test('connect with an encryptionKey and an invalid userId is InvalidPayload (fid checked on creation)', async () => {
    await rejectsWith(connect({ userId: 'bad+id', encryptionKey }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(connect({ userId: 'x'.repeat(71), encryptionKey }), InvalidPayloadError, 'InvalidPayload')
  })

  test('changing the encryption key invalidates keys signed with the old one', async () => {
    const { bot: other } = await admin.createBot({ name: 'rotating chat' })
    const url = other.integrations.chat.webhookUrl
    const oldKey = other.integrations.chat.configuration.encryptionKey
    await connect({ apiUrl: url, userId: 'rotated-user' })
    const c = await connect({ apiUrl: url, userId: 'rotated-user', encryptionKey: oldKey })
    const newKey = 'a-brand-new-encryption-key-0123456789'
    await admin.updateBot({ id: other.id, integrations: { chat: { configuration: { encryptionKey: newKey } } } })
    await rejectsWith(c.getUser({}), UnauthorizedError, 'Unauthorized')
    const c2 = await connect({ apiUrl: url, userId: 'rotated-user', encryptionKey: newKey })
    assert.equal(c2.user.id, 'rotated-user')
  })
})

// ---------------------------------------------------------------- users

describe('users', () => {
  test('createUser stores name, pictureUrl and profile; getUser returns them', async () => {
    const anon = new Client({ apiUrl })
    const { user, key } = await anon.createUser({ name: 'Ada', pictureUrl: 'https://example.com/ada.png', profile: 'mathematician' })
    assertUser(user)
    assert.equal(user.name, 'Ada')
    assert.equal(user.pictureUrl, 'https://example.com/ada.png')
    assert.equal(user.profile, 'mathematician')
    const { user: got } = await anon.getUser({ 'x-user-key': key })
    assert.deepEqual(got, user)
  })

  test('updateUser changes name, pictureUrl and profile; getUser sees the change', async () => {
    const c = await connect()
    const { user: updated } = await c.updateUser({ name: 'Grace', pictureUrl: 'https://example.com/g.png', profile: 'admiral' })
    assertUser(updated)
    assert.equal(updated.id, c.user.id)
    assert.equal(updated.name, 'Grace')
    assert.equal(updated.pictureUrl, 'https://example.com/g.png')
    assert.equal(updated.profile, 'admiral')
    assert.equal(updated.createdAt, c.user.createdAt)
    assert.ok(Date.parse(updated.updatedAt) >= Date.parse(c.user.updatedAt), 'updatedAt must not go back')
    const { user } = await c.getUser({})
    assert.deepEqual(user, updated)
    // A partial update leaves the other fields alone.
    const { user: partial } = await c.updateUser({ name: 'Grace H.' })
    assert.equal(partial.name, 'Grace H.')
    assert.equal(partial.pictureUrl, 'https://example.com/g.png')
    assert.equal(partial.profile, 'admiral')
  })

  test('getOrCreateUser with fields updates them', async () => {
    await connect({ userId: 'goc-fields' })
    const c = await connect({ userId: 'goc-fields', encryptionKey })
    const { user } = await new Client({ apiUrl }).getOrCreateUser({ 'x-user-key': c.user.key, name: 'Named later' })
    assert.equal(user.id, 'goc-fields')
    assert.equal(user.name, 'Named later')
  })

  test('a profile over 1000 characters is InvalidPayload', async () => {
    const c = await connect()
    await rejectsWith(c.updateUser({ profile: 'p'.repeat(1001) }), InvalidPayloadError, 'InvalidPayload')
    const { user } = await c.updateUser({ profile: 'p'.repeat(1000) })
    assert.equal(user.profile.length, 1000)
  })

  test('deleteUser deletes the caller; its key then no longer works', async () => {
    const c = await connect({ userId: 'to-be-deleted' })
    const res = await c.deleteUser({})
    assert.deepEqual(res, {})
    await rejectsWith(c.getUser({}), UnauthorizedError, 'Unauthorized')
  })

  test('createUser with an existing id is AlreadyExists', async () => {
    const anon = new Client({ apiUrl })
    await anon.createUser({ id: 'taken-user-id' })
    await rejectsWith(anon.createUser({ id: 'taken-user-id' }), AlreadyExistsError, 'AlreadyExists')
  })

  test('createUser accepts every fid character and exactly 70 characters', async () => {
    const anon = new Client({ apiUrl })
    for (const id of ['Az09_-', 'with/slash', 'with\\backslash', 'u'.repeat(70)]) {
      const { user } = await anon.createUser({ id })
      assert.equal(user.id, id)
    }
  })

  test('createUser with an invalid fid is InvalidPayload', async () => {
    const anon = new Client({ apiUrl })
    await rejectsWith(anon.createUser({ id: 'has+plus' }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(anon.createUser({ id: 'has space' }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(anon.createUser({ id: 'x'.repeat(71) }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(anon.createUser({ id: 'x'.repeat(123) }), InvalidPayloadError, 'InvalidPayload')
  })
})

// ---------------------------------------------------------------- conversations

describe('conversations', () => {
  let alice
  let bob
  before(async () => {
    alice = await connect()
    bob = await connect()
  })

  test('createConversation without id generates one; with id keeps it', async () => {
    const { conversation: a } = await alice.createConversation({})
    assertConversation(a)
    const id = `conv-${crypto.randomUUID()}`
    const { conversation: b } = await alice.createConversation({ id })
    assertConversation(b)
    assert.equal(b.id, id)
    const { conversation: got } = await alice.getConversation({ id })
    assert.deepEqual(got, b)
  })

  test('createConversation with an existing id is AlreadyExists', async () => {
    await alice.createConversation({ id: 'taken-conv-id' })
    await rejectsWith(alice.createConversation({ id: 'taken-conv-id' }), AlreadyExistsError, 'AlreadyExists')
    await rejectsWith(bob.createConversation({ id: 'taken-conv-id' }), AlreadyExistsError, 'AlreadyExists')
  })

  test('createConversation with an invalid fid is InvalidPayload', async () => {
    await rejectsWith(alice.createConversation({ id: 'conv+plus' }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(alice.createConversation({ id: 'c'.repeat(71) }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(alice.createConversation({ id: 'c'.repeat(118) }), InvalidPayloadError, 'InvalidPayload')
    const { conversation } = await alice.createConversation({ id: 'c'.repeat(70) })
    assert.equal(conversation.id, 'c'.repeat(70))
  })

  test('getOrCreateConversation creates once and then returns the same conversation', async () => {
    const id = `goc-${crypto.randomUUID()}`
    const { conversation: first } = await alice.getOrCreateConversation({ id })
    assertConversation(first)
    assert.equal(first.id, id)
    const { conversation: second } = await alice.getOrCreateConversation({ id })
    assert.deepEqual(second, first)
  })

  test("getOrCreateConversation on another user's id is Forbidden", async () => {
    const id = `goc-owned-${crypto.randomUUID()}`
    await alice.getOrCreateConversation({ id })
    await rejectsWith(bob.getOrCreateConversation({ id }), ForbiddenError, 'Forbidden')
  })

  test('getOrCreateConversation with an invalid new fid is InvalidPayload', async () => {
    await rejectsWith(alice.getOrCreateConversation({ id: 'goc+bad' }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(alice.getOrCreateConversation({ id: 'g'.repeat(71) }), InvalidPayloadError, 'InvalidPayload')
  })

  test('getConversation: participants only (Forbidden otherwise); unknown id is ResourceNotFound', async () => {
    const { conversation } = await alice.createConversation({})
    await rejectsWith(bob.getConversation({ id: conversation.id }), ForbiddenError, 'Forbidden')
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    const { conversation: got } = await bob.getConversation({ id: conversation.id })
    assert.deepEqual(got, conversation)
    await rejectsWith(alice.getConversation({ id: 'no-such-conversation' }), ResourceNotFoundError, 'ResourceNotFound')
  })

  test('listConversations lists only the conversations the caller owns', async () => {
    const carol = await connect()
    const dave = await connect()
    const owned = []
    for (let i = 0; i < 3; i++) owned.push((await carol.createConversation({})).conversation)
    const { conversation: foreign } = await dave.createConversation({})
    await dave.addParticipant({ conversationId: foreign.id, userId: carol.user.id })

    const res = await carol.listConversations({})
    assert.ok(Array.isArray(res.conversations))
    assert.ok(res.meta && typeof res.meta === 'object', 'listConversations must return meta')
    const all = await carol.list.conversations({}).collect()
    for (const c of all) assertConversation(c)
    assert.deepEqual(all.map((c) => c.id).sort(), owned.map((c) => c.id).sort())
    const daves = await dave.list.conversations({}).collect()
    assert.deepEqual(daves.map((c) => c.id), [foreign.id])
  })

  test('listConversations pages with nextToken', async () => {
    const erin = await connect()
    const ids = []
    for (let i = 0; i < 23; i++) ids.push((await erin.createConversation({})).conversation.id)
    const first = await erin.listConversations({})
    assert.equal(typeof first.meta.nextToken, 'string', 'a 23-item list should not fit one page (20 per page)')
    const all = await erin.list.conversations({}).collect()
    assert.equal(all.length, 23)
    assert.deepEqual(all.map((c) => c.id).sort(), ids.sort())
  })

  test('deleteConversation: owner only; afterwards getConversation is ResourceNotFound', async () => {
    const { conversation } = await alice.createConversation({ id: `del-${crypto.randomUUID()}` })
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
    await rejectsWith(bob.deleteConversation({ id: conversation.id }), ForbiddenError, 'Forbidden')
    const res = await alice.deleteConversation({ id: conversation.id })
    assert.deepEqual(res, {})
    await rejectsWith(alice.getConversation({ id: conversation.id }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(bob.getConversation({ id: conversation.id }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(alice.deleteConversation({ id: conversation.id }), ResourceNotFoundError, 'ResourceNotFound')
    // The id is free again.
    const { conversation: again } = await alice.createConversation({ id: conversation.id })
    assert.equal(again.id, conversation.id)
  })

  test('a conversation id with a slash works in REST paths (escaped as %2F)', async () => {
    const id = `team/${crypto.randomUUID()}/room`
    const { conversation } = await alice.createConversation({ id })
    assert.equal(conversation.id, id)
    const { conversation: got } = await alice.getConversation({ id })
    assert.equal(got.id, id)
    await alice.addParticipant({ conversationId: id, userId: bob.user.id })
    const { participants } = await bob.listParticipants({ conversationId: id })
    assert.equal(participants.length, 2)
    const { message } = await bob.createMessage({ conversationId: id, payload: { type: 'text', text: 'slash' } })
    assert.equal(message.conversationId, id)
  })
})

// ---------------------------------------------------------------- participants

describe('participants', () => {
  let owner
  let conversation
  const members = []
  before(async () => {
    owner = await connect()
    ;({ conversation } = await owner.createConversation({}))
    for (let i = 0; i < 25; i++) {
      members.push(await connect({ userId: `member-${String(i).padStart(2, '0')}-${crypto.randomUUID().slice(0, 8)}` }))
    }
  })

  test('addParticipant returns the added user', async () => {
    await owner.updateUser({ name: 'Owner' })
    for (const m of members) {
      const { participant } = await owner.addParticipant({ conversationId: conversation.id, userId: m.user.id })
      assertUser(participant, 'participant')
      assert.equal(participant.id, m.user.id)
      assert.equal(participant.createdAt, m.user.createdAt)
    }
  })

  test('addParticipant is owner-only; an unknown user is ResourceNotFound', async () => {
    const outsider = await connect()
    await rejectsWith(members[0].addParticipant({ conversationId: conversation.id, userId: outsider.user.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(outsider.addParticipant({ conversationId: conversation.id, userId: outsider.user.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(owner.addParticipant({ conversationId: conversation.id, userId: 'no-such-user' }), ResourceNotFoundError, 'ResourceNotFound')
  })

  test('adding a participant twice is harmless', async () => {
    const { participant } = await owner.addParticipant({ conversationId: conversation.id, userId: members[0].user.id })
    assert.equal(participant.id, members[0].user.id)
  })

  test('listParticipants spans several pages with meta.nextToken; list.participants collects them all', async () => {
    const want = [owner.user.id, ...members.map((m) => m.user.id)].sort()
    // By hand, following meta.nextToken with the nextToken parameter.
    const seen = []
    let nextToken
    let pages = 0
    do {
      const res = await owner.listParticipants({ conversationId: conversation.id, nextToken })
      assert.ok(Array.isArray(res.participants))
      assert.ok(res.meta && typeof res.meta === 'object', 'meta is required')
      for (const p of res.participants) assertUser(p, 'participant')
      seen.push(...res.participants.map((p) => p.id))
      nextToken = res.meta.nextToken
      if (nextToken !== undefined) assert.equal(typeof nextToken, 'string')
      pages++
      assert.ok(pages < 20, 'pagination does not end')
    } while (nextToken)
    assert.ok(pages >= 2, `26 participants came back in ${pages} page; expected several pages (20 per page)`)
    assert.equal(new Set(seen).size, seen.length, 'a participant was listed twice across pages')
    assert.deepEqual(seen.sort(), want)
    // With the client's iterator.
    const all = await owner.list.participants({ conversationId: conversation.id }).collect()
    assert.deepEqual(all.map((p) => p.id).sort(), want)
    // Participant objects carry the user's fields (spec 2.3).
    const me = all.find((p) => p.id === owner.user.id)
    assert.equal(me.name, 'Owner')
    // A participant who is not the owner may list too.
    const byMember = await members[3].list.participants({ conversationId: conversation.id }).collect()
    assert.equal(byMember.length, want.length)
  })

  test('listParticipants by a non-participant is Forbidden', async () => {
    const outsider = await connect()
    await rejectsWith(outsider.listParticipants({ conversationId: conversation.id }), ForbiddenError, 'Forbidden')
  })

  test('getParticipant is owner-only', async () => {
    const { participant } = await owner.getParticipant({ conversationId: conversation.id, userId: members[1].user.id })
    assertUser(participant, 'participant')
    assert.equal(participant.id, members[1].user.id)
    await rejectsWith(members[1].getParticipant({ conversationId: conversation.id, userId: members[1].user.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(members[2].getParticipant({ conversationId: conversation.id, userId: owner.user.id }), ForbiddenError, 'Forbidden')
  })

  test('getParticipant of a user who is not a participant is ResourceNotFound', async () => {
    const outsider = await connect()
    await rejectsWith(owner.getParticipant({ conversationId: conversation.id, userId: outsider.user.id }), ResourceNotFoundError, 'ResourceNotFound')
  })

  test('removeParticipant: the owner cannot be removed; a removed user is then Forbidden', async () => {
    await rejectsWith(owner.removeParticipant({ conversationId: conversation.id, userId: owner.user.id }), InvalidPayloadError, 'InvalidPayload')
    const victim = members[24]
    await rejectsWith(members[0].removeParticipant({ conversationId: conversation.id, userId: victim.user.id }), ForbiddenError, 'Forbidden')
    const res = await owner.removeParticipant({ conversationId: conversation.id, userId: victim.user.id })
    assert.deepEqual(res, {})
    await rejectsWith(victim.getConversation({ id: conversation.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(victim.listMessages({ conversationId: conversation.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(
      victim.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'still here?' } }),
      ForbiddenError,
      'Forbidden'
    )
    await rejectsWith(owner.getParticipant({ conversationId: conversation.id, userId: victim.user.id }), ResourceNotFoundError, 'ResourceNotFound')
    const all = await owner.list.participants({ conversationId: conversation.id }).collect()
    assert.ok(!all.some((p) => p.id === victim.user.id), 'the removed user is still listed')
    assert.equal(all.length, 25)
  })
})

// ---------------------------------------------------------------- messages

describe('messages', () => {
  let alice
  let bob
  let conversation
  before(async () => {
    alice = await connect()
    bob = await connect()
    conversation = await conversationWith(alice, bob)
  })

  for (const [name, payload] of Object.entries(VALID_PAYLOADS)) {
    test(`createMessage accepts a valid ${name} payload; getMessage returns it`, async () => {
      const { message } = await bob.createMessage({ conversationId: conversation.id, payload })
      assertMessage(message)
      assert.deepEqual(message.payload, payload)
      assert.equal(message.userId, bob.user.id)
      assert.equal(message.conversationId, conversation.id)
      assert.equal(message.metadata, undefined)
      const { message: got } = await alice.getMessage({ id: message.id })
      assert.deepEqual(got, message)
    })
  }

  for (const [name, payload] of Object.entries(INVALID_PAYLOADS)) {
    test(`createMessage refuses a payload with ${name} (InvalidPayload)`, async () => {
      await rejectsWith(alice.createMessage({ conversationId: conversation.id, payload }), InvalidPayloadError, 'InvalidPayload')
    })
  }

  test('createMessage without payload or conversationId is InvalidPayload', async () => {
    await rejectsWith(alice.createMessage({ conversationId: conversation.id }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(alice.createMessage({ payload: { type: 'text', text: 'x' } }), InvalidPayloadError, 'InvalidPayload')
  })

  test('extra payload properties are kept', async () => {
    const payload = { type: 'text', text: 'hi', extra: { nested: [1, 2] } }
    const { message } = await alice.createMessage({ conversationId: conversation.id, payload })
    assert.deepEqual(message.payload, payload)
  })

  test('metadata travels next to the payload, never inside it', async () => {
    const metadata = { source: 'compat', count: 3, nested: { ok: true }, nothing: null }
    const { message } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'with metadata' }, metadata })
    assertMessage(message)
    assert.deepEqual(message.metadata, metadata)
    assert.deepEqual(message.payload, { type: 'text', text: 'with metadata' })
    const { message: got } = await bob.getMessage({ id: message.id })
    assert.deepEqual(got, message)
    const listed = (await bob.list.messages({ conversationId: conversation.id }).collect()).find((m) => m.id === message.id)
    assert.ok(listed, 'the message is missing from listMessages')
    assert.deepEqual(listed, message)
  })

  test('a payload over the 1 MB chat limit is PayloadTooLarge', async () => {
    const payload = { type: 'text', text: 'x'.repeat(1024 * 1024 + 10) }
    await rejectsWith(alice.createMessage({ conversationId: conversation.id, payload }), PayloadTooLargeError, 'PayloadTooLarge')
  })

  test('a non-participant can neither send, read nor list messages (Forbidden)', async () => {
    const { message } = await alice.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'private' } })
    const outsider = await connect()
    await rejectsWith(outsider.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'hi' } }), ForbiddenError, 'Forbidden')
    await rejectsWith(outsider.getMessage({ id: message.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(outsider.listMessages({ conversationId: conversation.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(outsider.deleteMessage({ id: message.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(alice.createMessage({ conversationId: 'no-such-conv', payload: { type: 'text', text: 'hi' } }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(alice.getMessage({ id: 'no-such-message' }), ResourceNotFoundError, 'ResourceNotFound')
  })

  test('listMessages spans several pages; every message comes back exactly once', async () => {
    const conv = await conversationWith(alice, bob)
    const sent = []
    for (let i = 0; i < 25; i++) {
      const sender = i % 2 ? bob : alice
      sent.push((await sender.createMessage({ conversationId: conv.id, payload: { type: 'text', text: `m${i}` } })).message)
    }
    const first = await alice.listMessages({ conversationId: conv.id })
    assert.ok(Array.isArray(first.messages))
    assert.equal(typeof first.meta?.nextToken, 'string', '25 messages should not fit one page (20 per page)')
    const seen = [...first.messages]
    let nextToken = first.meta.nextToken
    let pages = 1
    while (nextToken) {
      const res = await alice.listMessages({ conversationId: conv.id, nextToken })
      seen.push(...res.messages)
      nextToken = res.meta.nextToken
      assert.ok(++pages < 20, 'pagination does not end')
    }
    for (const m of seen) assertMessage(m)
    assert.equal(new Set(seen.map((m) => m.id)).size, seen.length, 'a message was listed twice across pages')
    const byId = new Map(seen.map((m) => [m.id, m]))
    assert.equal(seen.length, sent.length)
    for (const m of sent) assert.deepEqual(byId.get(m.id), m)
    const all = await bob.list.messages({ conversationId: conv.id }).collect()
    assert.deepEqual(all.map((m) => m.id).sort(), sent.map((m) => m.id).sort())
  })

  test('deleteMessage: only the sender; afterwards getMessage is ResourceNotFound', async () => {
    const { message } = await bob.createMessage({ conversationId: conversation.id, payload: { type: 'text', text: 'delete me' } })
    await rejectsWith(alice.deleteMessage({ id: message.id }), ForbiddenError, 'Forbidden') // the owner is not the sender
    const res = await bob.deleteMessage({ id: message.id })
    assert.deepEqual(res, {})
    await rejectsWith(bob.getMessage({ id: message.id }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(alice.getMessage({ id: message.id }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(bob.deleteMessage({ id: message.id }), ResourceNotFoundError, 'ResourceNotFound')
    const all = await alice.list.messages({ conversationId: conversation.id }).collect()
    assert.ok(!all.some((m) => m.id === message.id), 'a deleted message is still listed')
  })
})

// ---------------------------------------------------------------- events

describe('custom events (spec 2.2, 4.2)', () => {
  let alice
  let bob
  let conversation
  before(async () => {
    alice = await connect({ userId: `evt-alice-${crypto.randomUUID().slice(0, 8)}` })
    bob = await connect()
    ;({ conversation } = await alice.createConversation({ id: `evt-conv-${crypto.randomUUID()}` }))
    await alice.addParticipant({ conversationId: conversation.id, userId: bob.user.id })
  })

  test('createEvent returns {id, createdAt, payload, conversationId, userId}; getEvent returns the same', async () => {
    const payload = { kind: 'custom', n: 42, nested: { list: [1, 'two', null] }, flag: false }
    const { event } = await alice.createEvent({ conversationId: conversation.id, payload })
    assert.deepEqual(Object.keys(event).sort(), ['conversationId', 'createdAt', 'id', 'payload', 'userId'])
    assert.equal(typeof event.id, 'string')
    assert.ok(event.id.length > 0)
    assertDateZ(event.createdAt, 'event.createdAt')
    assert.deepEqual(event.payload, payload)
    assert.equal(event.conversationId, conversation.id)
    assert.equal(event.userId, alice.user.id)
    const { event: got } = await bob.getEvent({ id: event.id })
    assert.deepEqual(got, event)
  })

  test('an empty payload object is fine', async () => {
    const { event } = await bob.createEvent({ conversationId: conversation.id, payload: {} })
    assert.deepEqual(event.payload, {})
    assert.equal(event.userId, bob.user.id)
  })

  test('createEvent with a missing or non-object payload is InvalidPayload', async () => {
    await rejectsWith(alice.createEvent({ conversationId: conversation.id }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(alice.createEvent({ conversationId: conversation.id, payload: 'text' }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(alice.createEvent({ payload: {} }), InvalidPayloadError, 'InvalidPayload')
  })

  test('events are for participants only; unknown ids are ResourceNotFound', async () => {
    const { event } = await alice.createEvent({ conversationId: conversation.id, payload: { secret: true } })
    const outsider = await connect()
    await rejectsWith(outsider.createEvent({ conversationId: conversation.id, payload: {} }), ForbiddenError, 'Forbidden')
    await rejectsWith(outsider.getEvent({ id: event.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(alice.getEvent({ id: 'no-such-event' }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(alice.createEvent({ conversationId: 'no-such-conv', payload: {} }), ResourceNotFoundError, 'ResourceNotFound')
  })
})

// ---------------------------------------------------------------- listenConversation

describe('listenConversation (compat-notes §1.8)', () => {
  let alice
  let bob
  before(async () => {
    alice = await connect()
    bob = await connect()
  })

  test('message_created: isBot false, equal to the listMessages item apart from isBot; dates end in Z', async () => {
    const conv = await conversationWith(alice, bob)
    const rec = await listen(alice, conv.id)
    assert.equal(rec.listener.status, 'connected')
    const { message } = await bob.createMessage({
      conversationId: conv.id,
      payload: { type: 'text', text: 'live' },
      metadata: { origin: 'compat', n: 1 },
    })
    const data = await rec.waitFor((t, d) => t === 'message_created' && d.id === message.id, 'message_created')
    assert.equal(data.isBot, false)
    assertDateZ(data.createdAt, 'message_created.createdAt')
    const { isBot, ...rest } = data
    const listed = (await alice.list.messages({ conversationId: conv.id }).collect()).find((m) => m.id === message.id)
    assert.deepEqual(rest, listed)
    assert.deepEqual(rest, message)
    assert.ok(!('metadata' in data.payload))
    await rec.close()
  })

  test('every payload type arrives as message_created (passes the client zod schema)', async () => {
    const conv = await conversationWith(alice)
    const rec = await listen(alice, conv.id)
    for (const [name, payload] of Object.entries(VALID_PAYLOADS)) {
      const { message } = await alice.createMessage({ conversationId: conv.id, payload })
      const data = await rec.waitFor((t, d) => t === 'message_created' && d.id === message.id, `message_created for ${name}`)
      assert.deepEqual(data.payload, payload, name)
    }
    const unknown = rec.real().filter((s) => s.type === 'unknown')
    assert.deepEqual(unknown, [], 'signals that failed the client schema arrived as unknown')
    await rec.close()
  })

  test('event_created carries the event with isBot false', async () => {
    const conv = await conversationWith(alice, bob)
    const rec = await listen(bob, conv.id)
    const { event } = await alice.createEvent({ conversationId: conv.id, payload: { hello: 'world' } })
    const data = await rec.waitFor((t, d) => t === 'event_created' && d.id === event.id, 'event_created')
    assert.equal(data.isBot, false)
    assertDateZ(data.createdAt, 'event_created.createdAt')
    const { isBot, ...rest } = data
    assert.deepEqual(rest, event)
    await rec.close()
  })

  test('participant_added, participant_removed and message_deleted', async () => {
    const carol = await connect()
    const conv = await conversationWith(alice, bob)
    const rec = await listen(alice, conv.id)

    await alice.addParticipant({ conversationId: conv.id, userId: carol.user.id })
    const added = await rec.waitFor((t, d) => t === 'participant_added' && d.participantId === carol.user.id, 'participant_added')
    assert.deepEqual(added, { conversationId: conv.id, participantId: carol.user.id })

    const { message } = await bob.createMessage({ conversationId: conv.id, payload: { type: 'text', text: 'soon gone' } })
    await rec.waitFor((t, d) => t === 'message_created' && d.id === message.id, 'message_created')
    await bob.deleteMessage({ id: message.id })
    const deleted = await rec.waitFor((t, d) => t === 'message_deleted' && d.id === message.id, 'message_deleted')
    // Upstream sends internal ids here; these users and this conversation have no foreign id, so they match.
    assert.deepEqual(deleted, { id: message.id, conversationId: conv.id, userId: bob.user.id })

    await alice.removeParticipant({ conversationId: conv.id, userId: carol.user.id })
    const removed = await rec.waitFor((t, d) => t === 'participant_removed' && d.participantId === carol.user.id, 'participant_removed')
    assert.deepEqual(removed, { conversationId: conv.id, participantId: carol.user.id })

    // Signals arrive in the order the writes happened.
    const order = rec.real().map((s) => s.type)
    assert.deepEqual(order, ['participant_added', 'message_created', 'message_deleted', 'participant_removed'])
    await rec.close()
  })

  test('a second listener on the same conversation also receives, and so does the other participant', async () => {
    const conv = await conversationWith(alice, bob)
    const a1 = await listen(alice, conv.id)
    const a2 = await listen(alice, conv.id)
    const b1 = await listen(bob, conv.id)
    const { message } = await alice.createMessage({ conversationId: conv.id, payload: { type: 'text', text: 'to all' } })
    for (const [name, rec] of [['first', a1], ['second', a2], ['bob', b1]]) {
      const data = await rec.waitFor((t, d) => t === 'message_created' && d.id === message.id, `message_created on the ${name} listener`)
      assert.equal(data.userId, alice.user.id)
    }
    // A closed listener leaves the others working.
    await a1.close()
    const { message: m2 } = await bob.createMessage({ conversationId: conv.id, payload: { type: 'text', text: 'after close' } })
    await a2.waitFor((t, d) => t === 'message_created' && d.id === m2.id, 'message_created after closing a sibling')
    await b1.waitFor((t, d) => t === 'message_created' && d.id === m2.id, 'message_created on bob after closing a sibling')
    await a2.close()
    await b1.close()
  })

  test('signals do not leak to listeners of other conversations', async () => {
    const c1 = await conversationWith(alice)
    const c2 = await conversationWith(alice)
    const r1 = await listen(alice, c1.id)
    const r2 = await listen(alice, c2.id)
    const { message } = await alice.createMessage({ conversationId: c2.id, payload: { type: 'text', text: 'only c2' } })
    await r2.waitFor((t, d) => t === 'message_created' && d.id === message.id, 'message_created on c2')
    await sleep(300)
    assert.deepEqual(r1.real(), [], 'the c1 listener received a c2 signal')
    await r1.close()
    await r2.close()
  })

  test("a conversation id containing '/' can be listened to", async () => {
    const id = `org/${crypto.randomUUID()}/chat`
    const fidUser = await connect({ userId: `team/${crypto.randomUUID().slice(0, 8)}` })
    await alice.createConversation({ id })
    await alice.addParticipant({ conversationId: id, userId: bob.user.id })
    await alice.addParticipant({ conversationId: id, userId: fidUser.user.id })
    const rec = await listen(bob, id)
    const { message } = await fidUser.createMessage({ conversationId: id, payload: { type: 'text', text: 'slashes' } })
    const data = await rec.waitFor((t, d) => t === 'message_created' && d.id === message.id, 'message_created')
    // Signals carry foreign ids (compat-notes §1.8).
    assert.equal(data.conversationId, id)
    assert.equal(data.userId, fidUser.user.id)
    const { event } = await fidUser.createEvent({ conversationId: id, payload: { via: 'slash' } })
    const ev = await rec.waitFor((t, d) => t === 'event_created' && d.id === event.id, 'event_created')
    assert.equal(ev.conversationId, id)
    assert.equal(ev.userId, fidUser.user.id)
    await rec.close()
  })

  test('a conversation whose id ends in /listen can be listened to', async () => {
    const id = `odd/listen`
    await alice.createConversation({ id })
    const rec = await listen(alice, id)
    const { message } = await alice.createMessage({ conversationId: id, payload: { type: 'text', text: 'odd' } })
    await rec.waitFor((t, d) => t === 'message_created' && d.id === message.id, 'message_created')
    await rec.close()
  })

  // The listen path carries the id unescaped (compat-notes §1.8), so every id the fid rule allows must route to
  // the stream, whatever segments it contains.
  for (const [name, suffix] of [
    ['ending in /participants', 'participants'],
    ['ending in /messages', 'messages'],
    ['with /participants/ in the middle', 'participants/x'],
  ]) {
    test(`a conversation id ${name} can be listened to`, async () => {
      const id = `room-${crypto.randomUUID().slice(0, 8)}/${suffix}`
      await alice.createConversation({ id })
      const rec = await listen(alice, id)
      try {
        const { message } = await alice.createMessage({ conversationId: id, payload: { type: 'text', text: name } })
        const data = await rec.waitFor((t, d) => t === 'message_created' && d.id === message.id, 'message_created')
        assert.equal(data.conversationId, id)
      } finally {
        await rec.close()
      }
    })
  }

  // Ids with an empty path segment ('a//b', '/lead', 'trail/') are valid fids; their listen path must be served
  // as sent (a redirect would crash eventsource 2.0.2, which resolves Location without a base).
  for (const id of ['double//slash', '/leading-slash', 'trailing-slash/']) {
    test(`a conversation id ${JSON.stringify(id)} can be listened to`, {
      timeout: 5000,
    }, async () => {
      const fid = id.replace('slash', `slash-${crypto.randomUUID().slice(0, 8)}`)
      await alice.createConversation({ id: fid })
      const rec = await listen(alice, fid)
      try {
        const { message } = await alice.createMessage({ conversationId: fid, payload: { type: 'text', text: 'empty segment' } })
        const data = await rec.waitFor((t, d) => t === 'message_created' && d.id === message.id, 'message_created')
        assert.equal(data.conversationId, fid)
      } finally {
        await rec.close()
      }
    })
  }

  test("a non-participant's listen is refused (403); unknown conversation 404; bad key 401", async () => {
    const conv = await conversationWith(alice)
    const outsider = await connect()
    const forbidden = await listenRejects(outsider, conv.id)
    assert.equal(forbidden?.status, 403, `expected status 403, got ${JSON.stringify(forbidden)}`)
    const missing = await listenRejects(alice, 'no-such-conversation-to-listen')
    assert.equal(missing?.status, 404, `expected status 404, got ${JSON.stringify(missing)}`)
    const unauthorized = await listenRejects({ listenConversation: (x) => new Client({ apiUrl }).listenConversation({ ...x, 'x-user-key': 'bad-key' }) }, conv.id)
    assert.equal(unauthorized?.status, 401, `expected status 401, got ${JSON.stringify(unauthorized)}`)
  })

  test('after removeParticipant the removed user is disconnected and stops receiving', async () => {
    const carol = await connect()
    const conv = await conversationWith(alice, bob, carol)
    const other = await conversationWith(alice, carol) // carol listens elsewhere too
    const ownerRec = await listen(alice, conv.id)
    const carolRec = await listen(carol, conv.id)
    const carolOther = await listen(carol, other.id)

    const { message: before } = await alice.createMessage({ conversationId: conv.id, payload: { type: 'text', text: 'before' } })
    await carolRec.waitFor((t, d) => t === 'message_created' && d.id === before.id, 'message_created before removal')

    await alice.removeParticipant({ conversationId: conv.id, userId: carol.user.id })
    const err = await carolRec.waitError()
    assert.ok(err instanceof Error, 'the listener emits an Error')
    assert.equal(carolRec.listener.status, 'disconnected')
    await ownerRec.waitFor((t, d) => t === 'participant_removed' && d.participantId === carol.user.id, 'participant_removed on the owner')

    // Upstream closes every stream of the removed user (compat-notes §1.8).
    await carolOther.waitError()
    assert.equal(carolOther.listener.status, 'disconnected')

    const seenBefore = carolRec.signals.length
    const { message: after } = await alice.createMessage({ conversationId: conv.id, payload: { type: 'text', text: 'after' } })
    await ownerRec.waitFor((t, d) => t === 'message_created' && d.id === after.id, 'message_created after removal')
    await sleep(300)
    assert.equal(carolRec.signals.length, seenBefore, 'the removed user still received signals')
    assert.ok(!carolRec.signals.some((s) => s.data?.id === after.id))

    // Reconnecting is refused now that carol is no longer a participant.
    let reconnectErr
    try {
      await carolRec.listener.connect()
    } catch (e) {
      reconnectErr = e
    }
    assert.ok(reconnectErr, 'reconnecting after removal should be refused')
    assert.equal(reconnectErr.status, 403)
    openListeners.delete(carolRec.listener)
    openListeners.delete(carolOther.listener)
    await ownerRec.close()
  })

  test('listener.connect() after disconnect() resumes receiving', async () => {
    const conv = await conversationWith(alice)
    const rec = await listen(alice, conv.id)
    await rec.listener.disconnect()
    assert.equal(rec.listener.status, 'disconnected')
    await rec.listener.connect()
    assert.equal(rec.listener.status, 'connected')
    const { message } = await alice.createMessage({ conversationId: conv.id, payload: { type: 'text', text: 'resumed' } })
    await rec.waitFor((t, d) => t === 'message_created' && d.id === message.id, 'message_created after reconnect')
    await rec.close()
  })

  test(`a ping arrives as an 'unknown' signal with data 'ping' (--sse-ping-interval ${PING_INTERVAL})`, async () => {
    const conv = await conversationWith(alice)
    const rec = await listen(alice, conv.id)
    const data = await rec.waitFor((t, d) => t === 'unknown' && d === 'ping', "an 'unknown' ping", 5000)
    assert.equal(data, 'ping')
    assert.deepEqual(rec.errors, [])
    assert.equal(rec.listener.status, 'connected')
    await rec.close()
  })

  test('deleteUser ends the user\'s streams', async () => {
    const dan = await connect()
    const conv = await conversationWith(dan)
    const rec = await listen(dan, conv.id)
    await dan.deleteUser({})
    await rec.waitError()
    assert.equal(rec.listener.status, 'disconnected')
    openListeners.delete(rec.listener)
  })
})

// Admin API compatibility: drives the server only through the official
// @botpress/client 1.45.0 (plus two raw fetches for what the client cannot
// send), and checks what the client's types and error handling rely on
// (compat-notes §0, §2.1, §2.3, §3).

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import {
  Client,
  isApiError,
  errorFrom,
  AlreadyExistsError,
  ForbiddenError,
  InvalidPayloadError,
  MethodNotFoundError,
  ReferenceConstraintError,
  ResourceNotFoundError,
  UnauthorizedError,
} from '@botpress/client'
import { startServer } from '../support/server.js'

// The client falls back to BP_* variables; a stray one must not change what
// a test sends (e.g. a "client without workspaceId").
for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

let server
let client // owner of the bootstrap workspace

before(async () => {
  server = await startServer()
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
})

after(async () => {
  await server?.stop()
})

// ---------------------------------------------------------------- helpers

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/
const ERROR_ID_RE = /^err_/

function assertIsoDate(value, what) {
  assert.equal(typeof value, 'string', `${what} must be a string, got ${JSON.stringify(value)}`)
  assert.match(value, ISO_RE, `${what} must be an ISO 8601 date-time`)
  assert.ok(!Number.isNaN(Date.parse(value)), `${what} must parse as a date`)
}

function assertPlainObject(value, what) {
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `${what} must be an object, got ${JSON.stringify(value)}`)
}

function assertOneOf(value, allowed, what) {
  assert.ok(allowed.includes(value), `${what} must be one of ${allowed.join('|')}, got ${JSON.stringify(value)}`)
}

/**
 * Awaits promise, which must reject with an API error of class ErrorClass
 * and wire type `type`. The client picks the class from the body's `type`
 * alone and throws UnknownError when id, code, type or message is missing
 * (compat-notes §0), so the class check also proves the body is complete.
 */
async function rejectsWith(promise, ErrorClass, type) {
  const want = `${type}Error` // the bundled class names are minified
  let err
  try {
    await promise
  } catch (e) {
    err = e
  }
  assert.ok(err, `expected ${want}, but the call succeeded`)
  assert.ok(isApiError(err), `expected an API error, got ${err?.stack ?? err}`)
  assert.ok(
    err instanceof ErrorClass,
    `expected ${want}, got type=${err.type} code=${err.code}: ${err.message}`
  )
  assert.equal(err.type, type)
  assert.equal(typeof err.id, 'string')
  assert.match(err.id, ERROR_ID_RE, `error id ${err.id} must start with err_`)
  assert.notEqual(err.id, 'UNKNOWN', 'the server sent an empty error id')
  assert.equal(typeof err.message, 'string')
  assert.ok(err.message.length > 0, 'error message must not be empty')
  return err
}

/** Checks every field the client's Bot type requires (GetBotResponse['bot']). */
function assertBotShape(bot) {
  assertPlainObject(bot, 'bot')
  assert.equal(typeof bot.id, 'string')
  assert.ok(bot.id.length >= 28 && bot.id.length <= 36, `bot id ${bot.id} must be 28 to 36 characters (compat-notes §2.3)`)
  assertIsoDate(bot.createdAt, 'bot.createdAt')
  assertIsoDate(bot.updatedAt, 'bot.updatedAt')
  assert.equal(typeof bot.signingSecret, 'string')
  assert.ok(bot.signingSecret.length > 0, 'signingSecret must not be empty')

  assertPlainObject(bot.integrations, 'bot.integrations')
  for (const [key, inst] of Object.entries(bot.integrations)) {
    const w = `bot.integrations.${key}`
    assertPlainObject(inst, w)
    assert.equal(inst.id, key, `${w}: the map is keyed by integration id (no x-multiple-integrations header was sent)`)
    assert.equal(typeof inst.enabled, 'boolean', `${w}.enabled`)
    assert.equal(typeof inst.name, 'string', `${w}.name`)
    assert.equal(typeof inst.version, 'string', `${w}.version`)
    assert.equal(typeof inst.webhookId, 'string', `${w}.webhookId`)
    assert.ok(inst.webhookId.length > 0, `${w}.webhookId must not be empty`)
    assert.equal(typeof inst.webhookUrl, 'string', `${w}.webhookUrl`)
    assert.doesNotThrow(() => new URL(inst.webhookUrl), `${w}.webhookUrl must be an absolute URL`)
    assert.ok(inst.webhookUrl.includes(inst.webhookId), `${w}.webhookUrl should contain the webhookId`)
    assert.ok(inst.configurationType === null || typeof inst.configurationType === 'string', `${w}.configurationType`)
    assertPlainObject(inst.configuration, `${w}.configuration`)
    assertOneOf(
      inst.status,
      ['registration_pending', 'registered', 'registration_failed', 'unregistration_pending', 'unregistered', 'unregistration_failed'],
      `${w}.status`
    )
    assert.ok(inst.statusReason === null || typeof inst.statusReason === 'string', `${w}.statusReason`)
    assert.ok(Array.isArray(inst.disabledChannels), `${w}.disabledChannels`)
    assertIsoDate(inst.createdAt, `${w}.createdAt`)
    assertIsoDate(inst.updatedAt, `${w}.updatedAt`)
    for (const f of ['title', 'description', 'iconUrl']) assert.equal(typeof inst[f], 'string', `${w}.${f}`)
    assert.equal(typeof inst.public, 'boolean', `${w}.public`)
    assertOneOf(inst.visibility, ['public', 'private', 'unlisted'], `${w}.visibility`)
    assertOneOf(inst.verificationStatus, ['unapproved', 'pending', 'approved', 'rejected'], `${w}.verificationStatus`)
    assertOneOf(inst.lifecycleStatus, ['published', 'deprecated'], `${w}.lifecycleStatus`)
  }

  assertPlainObject(bot.plugins, 'bot.plugins')
  if (bot.maxExecutionTime !== undefined) assert.equal(typeof bot.maxExecutionTime, 'number')
  for (const k of ['user', 'conversation', 'message']) {
    assertPlainObject(bot[k], `bot.${k}`)
    assertPlainObject(bot[k].tags, `bot.${k}.tags`)
  }
  assertPlainObject(bot.states, 'bot.states')
  for (const [k, s] of Object.entries(bot.states)) {
    assertOneOf(s.type, ['conversation', 'user', 'bot'], `bot.states.${k}.type`)
    assertPlainObject(s.schema, `bot.states.${k}.schema`)
  }
  assertPlainObject(bot.configuration, 'bot.configuration')
  assertPlainObject(bot.configuration.data, 'bot.configuration.data')
  assertPlainObject(bot.configuration.schema, 'bot.configuration.schema')
  assertPlainObject(bot.events, 'bot.events')
  for (const [k, e] of Object.entries(bot.events)) assertPlainObject(e.schema, `bot.events.${k}.schema`)
  assertPlainObject(bot.recurringEvents, 'bot.recurringEvents')
  for (const [k, r] of Object.entries(bot.recurringEvents)) {
    const w = `bot.recurringEvents.${k}`
    assert.equal(typeof r.schedule?.cron, 'string', `${w}.schedule.cron`)
    assert.equal(typeof r.type, 'string', `${w}.type`)
    assertPlainObject(r.payload, `${w}.payload`)
    assert.equal(typeof r.failedAttempts, 'number', `${w}.failedAttempts`)
    assert.ok(r.lastFailureReason === null || typeof r.lastFailureReason === 'string', `${w}.lastFailureReason`)
  }
  assertPlainObject(bot.subscriptions, 'bot.subscriptions')
  assert.ok('events' in bot.subscriptions, 'bot.subscriptions.events is required (null means all events)')
  assert.ok(bot.subscriptions.events === null || typeof bot.subscriptions.events === 'object', 'bot.subscriptions.events')
  assertPlainObject(bot.actions, 'bot.actions')
  for (const [k, a] of Object.entries(bot.actions)) {
    assertPlainObject(a.input?.schema, `bot.actions.${k}.input.schema`)
    assertPlainObject(a.output?.schema, `bot.actions.${k}.output.schema`)
  }
  assertPlainObject(bot.tags, 'bot.tags')
  for (const [k, v] of Object.entries(bot.tags)) assert.equal(typeof v, 'string', `bot.tags.${k}`)
  assert.equal(typeof bot.name, 'string')
  if (bot.description !== undefined) assert.equal(typeof bot.description, 'string')
  if (bot.deployedAt !== undefined) assertIsoDate(bot.deployedAt, 'bot.deployedAt')
  assert.equal(typeof bot.dev, 'boolean')
  assert.ok(Array.isArray(bot.secrets), 'bot.secrets must be an array of names')
  for (const s of bot.secrets) assert.equal(typeof s, 'string')
  if (bot.createdBy !== undefined) assert.equal(typeof bot.createdBy, 'string')
  assert.equal(typeof bot.alwaysAlive, 'boolean')
  assertOneOf(bot.status, ['active', 'deploying', 'deleting'], 'bot.status')
  assert.ok(Array.isArray(bot.medias), 'bot.medias')
  for (const m of bot.medias) {
    assert.equal(typeof m.url, 'string')
    assert.equal(typeof m.name, 'string')
  }
  assertOneOf(bot.type, ['studio', 'adk', 'desk'], 'bot.type')
  assert.ok(!('url' in bot), 'the Bot response has no url field (compat-notes §2.3)')
}

function assertBotListItem(item) {
  assert.equal(typeof item.id, 'string')
  assertIsoDate(item.createdAt, 'listBots item createdAt')
  assertIsoDate(item.updatedAt, 'listBots item updatedAt')
  assert.equal(typeof item.name, 'string')
  if (item.deployedAt !== undefined) assertIsoDate(item.deployedAt, 'listBots item deployedAt')
  assertPlainObject(item.tags, 'listBots item tags')
  assertOneOf(item.type, ['studio', 'adk', 'desk'], 'listBots item type')
}

function assertWorkspaceShape(ws) {
  assertPlainObject(ws, 'workspace')
  for (const f of ['id', 'name', 'ownerId']) assert.equal(typeof ws[f], 'string', `workspace.${f}`)
  assertIsoDate(ws.createdAt, 'workspace.createdAt')
  assertIsoDate(ws.updatedAt, 'workspace.updatedAt')
  assert.equal(typeof ws.botCount, 'number', 'workspace.botCount')
  assertOneOf(ws.billingVersion, ['v1', 'v2', 'v3', 'v4'], 'workspace.billingVersion')
  assertOneOf(ws.plan, ['community', 'team', 'enterprise', 'plus', 'managed'], 'workspace.plan')
  assert.equal(typeof ws.blocked, 'boolean', 'workspace.blocked')
  assert.equal(typeof ws.spendingLimit, 'number', 'workspace.spendingLimit')
  assert.ok('activeTrialId' in ws, 'workspace.activeTrialId is required (string or null)')
  assert.ok(ws.activeTrialId === null || typeof ws.activeTrialId === 'string', 'workspace.activeTrialId')
  for (const f of ['about', 'profilePicture', 'contactEmail', 'website', 'handle']) {
    if (ws[f] !== undefined) assert.equal(typeof ws[f], 'string', `workspace.${f}`)
  }
  if (ws.socialAccounts !== undefined) assert.ok(Array.isArray(ws.socialAccounts), 'workspace.socialAccounts')
  if (ws.isPublic !== undefined) assert.equal(typeof ws.isPublic, 'boolean', 'workspace.isPublic')
}

function assertTokenListItem(t, what) {
  assert.equal(typeof t.id, 'string', `${what}.id`)
  assertIsoDate(t.createdAt, `${what}.createdAt`)
  assert.equal(typeof t.note, 'string', `${what}.note`)
  assert.ok(!('value' in t), `${what} must not carry the secret value after creation`)
}

let uniq = 0
const unique = (prefix) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++uniq}`

async function rawFetch(path, init = {}) {
  const res = await fetch(new URL(path, server.apiUrl), {
    ...init,
    headers: {
      authorization: `Bearer ${server.token}`,
      'x-workspace-id': server.workspaceId,
      'content-type': 'application/json',
      ...init.headers,
    },
  })
  const text = await res.text()
  let body
  try {
    body = JSON.parse(text)
  } catch {
    assert.fail(`${init.method ?? 'GET'} ${path}: expected a JSON body, got ${res.status} ${JSON.stringify(text)}`)
  }
  return { res, body }
}

// ------------------------------------------------------------------- bots

describe('bots', () => {
  const fullInput = () => ({
    name: 'Compat full bot',
    description: 'A bot with every createBot field set',
    tags: { team: 'compat', env: 'test' },
    code: "bot.on.message('*', () => {})",
    secrets: { API_KEY: 'super-secret-value-1', OTHER: 'super-secret-value-2' },
    type: 'studio',
    maxExecutionTime: 60,
    medias: [{ url: 'https://example.com/logo.png', name: 'logo' }],
    states: { counter: { type: 'conversation', schema: { type: 'object', properties: { n: { type: 'number' } } }, expiry: 3600 } },
    events: { ping: { title: 'Ping', description: 'a ping', schema: { type: 'object' }, attributes: { kind: 'test' } } },
    recurringEvents: { tick: { schedule: { cron: '*/5 * * * *' }, type: 'ping', payload: { hello: 'world' } } },
    subscriptions: { events: { ping: {} } },
    actions: {
      doIt: {
        title: 'Do it',
        description: 'does it',
        billable: false,
        cacheable: true,
        input: { schema: { type: 'object' } },
        output: { schema: { type: 'object' } },
        attributes: { category: 'misc' },
      },
    },
    configuration: { data: { greeting: 'hi', nested: { n: 1 } }, schema: { type: 'object' } },
    user: { tags: { plan: { title: 'Plan', description: 'billing plan' } } },
    conversation: { tags: { topic: { title: 'Topic' } } },
    message: { tags: { lang: { description: 'language' } } },
  })

  test('createBot returns a complete Bot and getBot returns the same bot', async () => {
    const input = fullInput()
    const created = await client.createBot(input)
    assertPlainObject(created, 'createBot response')
    const { bot } = created
    assertBotShape(bot)

    assert.equal(bot.name, input.name)
    assert.equal(bot.description, input.description)
    assert.deepEqual(bot.tags, input.tags)
    assert.equal(bot.dev, false)
    assert.equal(bot.type, 'studio')
    assert.equal(bot.maxExecutionTime, 60)
    assert.deepEqual(bot.medias, input.medias)
    assert.deepEqual(bot.states, input.states)
    assert.deepEqual(bot.events, input.events)
    assert.deepEqual(bot.actions, input.actions)
    assert.deepEqual(bot.subscriptions, input.subscriptions)
    assert.deepEqual(bot.configuration, input.configuration)
    assert.deepEqual(bot.user, input.user)
    assert.deepEqual(bot.conversation, input.conversation)
    assert.deepEqual(bot.message, input.message)
    assert.deepEqual(bot.recurringEvents, {
      tick: { ...input.recurringEvents.tick, failedAttempts: 0, lastFailureReason: null },
    })

    // Secrets: names only, values never leave the server.
    assert.deepEqual([...bot.secrets].sort(), ['API_KEY', 'OTHER'])
    const json = JSON.stringify(created)
    assert.ok(!json.includes('super-secret-value'), 'a secret value leaked into the Bot response')

    // code given -> deployed
    assert.ok(bot.deployedAt, 'deployedAt must be set when code is given')
    assertIsoDate(bot.deployedAt, 'bot.deployedAt')

    // Every bot has at least the built-in chat integration, with a webhook.
    assert.ok(Object.keys(bot.integrations).length >= 1, 'expected at least one integration (the chat webhook)')

    const got = await client.getBot({ id: bot.id })
    assertBotShape(got.bot)
    const { signingSecret: _a, ...gotRest } = got.bot
    const { signingSecret: _b, ...createdRest } = bot
    assert.deepEqual(gotRest, createdRest)
  })

  test('createBot with no input applies defaults; no code means not deployed', async () => {
    const { bot } = await client.createBot({})
    assertBotShape(bot)
    assert.equal(bot.deployedAt, undefined, 'deployedAt must be absent when no code was given')
    assert.equal(bot.dev, false)
    assert.deepEqual(bot.secrets, [])
    assert.equal(bot.alwaysAlive, false)
    assert.ok(bot.name.length > 0, 'a default name is expected')

    const dev = await client.createBot({ name: 'dev bot', dev: true })
    assertBotShape(dev.bot)
    assert.equal(dev.bot.dev, true)
  })

  test('two bots get distinct ids, signing secrets and webhook ids', async () => {
    const [a, b] = await Promise.all([client.createBot({ name: 'twin a' }), client.createBot({ name: 'twin b' })])
    assert.notEqual(a.bot.id, b.bot.id)
    assert.notEqual(a.bot.signingSecret, b.bot.signingSecret)
    const hooks = (bot) => Object.values(bot.integrations).map((i) => i.webhookId)
    for (const h of hooks(a.bot)) assert.ok(!hooks(b.bot).includes(h), 'webhook ids must differ between bots')
  })

  test('updateBot changes fields, removes null entries, and getBot sees the change', async () => {
    const { bot: before } = await client.createBot({
      name: 'before update',
      tags: { keep: 'k', drop: 'd' },
      secrets: { OLD: 'old-secret-value' },
      states: { a: { type: 'user', schema: {} }, b: { type: 'bot', schema: {} } },
      user: { tags: { x: { title: 'X' } } },
      configuration: { data: { v: 1 }, schema: {} },
    })
    assert.equal(before.deployedAt, undefined)
    await new Promise((r) => setTimeout(r, 5)) // let updatedAt move

    const [integrationId] = Object.keys(before.integrations)
    const { bot } = await client.updateBot({
      id: before.id,
      name: 'after update',
      description: 'updated',
      tags: { drop: null, added: 'a' },
      secrets: { OLD: null, NEW: 'new-secret-value' },
      states: { b: null },
      user: { tags: { y: { description: 'Y' } } },
      configuration: { data: { v: 2 } },
      alwaysAlive: true,
      code: "bot.on.message('*', () => {}) // v2",
      integrations: { [integrationId]: { enabled: false } },
    })
    assertBotShape(bot)
    assert.equal(bot.id, before.id)
    assert.equal(bot.name, 'after update')
    assert.equal(bot.description, 'updated')
    assert.deepEqual(bot.tags, { keep: 'k', added: 'a' })
    assert.deepEqual(bot.secrets, ['NEW'])
    assert.ok(!JSON.stringify(bot).includes('secret-value'), 'a secret value leaked into the Bot response')
    assert.deepEqual(Object.keys(bot.states), ['a'])
    assert.deepEqual(bot.user.tags, { x: { title: 'X' }, y: { description: 'Y' } })
    assert.deepEqual(bot.configuration.data, { v: 2 })
    assert.equal(bot.alwaysAlive, true)
    assert.ok(bot.deployedAt, 'deployedAt must be set once code is given')
    assert.equal(bot.integrations[integrationId].enabled, false)
    assert.equal(bot.integrations[integrationId].webhookId, before.integrations[integrationId].webhookId)
    assert.equal(bot.createdAt, before.createdAt)
    assert.ok(Date.parse(bot.updatedAt) >= Date.parse(before.updatedAt))

    const { bot: got } = await client.getBot({ id: before.id })
    assert.equal(got.name, 'after update')
    assert.deepEqual(got.tags, { keep: 'k', added: 'a' })
    assert.equal(got.alwaysAlive, true)
    assert.equal(got.integrations[integrationId].enabled, false)
  })

  test('updateBot with a typed null attribute (events/actions attributes: string | null) is accepted', async () => {
    // UpdateBotRequestBody types events.*.attributes and actions.*.attributes
    // values as string | null.
    const { bot } = await client.createBot({
      events: { e: { schema: {}, attributes: { a: '1', b: '2' } } },
      actions: { act: { input: { schema: {} }, output: { schema: {} }, attributes: { a: '1' } } },
    })
    const { bot: updated } = await client.updateBot({
      id: bot.id,
      events: { e: { schema: {}, attributes: { a: '1', b: null } } },
      actions: { act: { input: { schema: {} }, output: { schema: {} }, attributes: { a: null } } },
    })
    assertBotShape(updated)
    // The Bot type has string-only attributes: a null must not come back.
    assert.equal(updated.events.e.attributes?.a, '1')
    assert.ok(updated.events.e.attributes?.b === undefined, 'a null attribute removes it')
    assert.ok(updated.actions.act.attributes?.a === undefined, 'a null attribute removes it')
  })

  test('rotateBotSigningSecrets returns a new secret', async () => {
    const { bot } = await client.createBot({ name: 'rotate me' })
    const { newSigningSecret } = await client.rotateBotSigningSecrets({ id: bot.id })
    assert.equal(typeof newSigningSecret, 'string')
    assert.ok(newSigningSecret.length > 0)
    assert.notEqual(newSigningSecret, bot.signingSecret)
  })

  test('getBotLogs answers with a logs array and nextToken at the top level', async () => {
    const { bot } = await client.createBot({ name: 'logs' })
    const res = await client.getBotLogs({ id: bot.id, timeStart: new Date(Date.now() - 3600_000).toISOString() })
    assert.ok(Array.isArray(res.logs))
    assert.ok(!('meta' in res), 'getBotLogs has nextToken at the top level, not in meta')
  })

  test('deleteBot removes the bot: getBot, updateBot and a second deleteBot reject with ResourceNotFoundError', async () => {
    const { bot } = await client.createBot({ name: 'to delete', tags: { suite: 'delete' } })
    const res = await client.deleteBot({ id: bot.id })
    assert.deepEqual(res, {})
    await rejectsWith(client.getBot({ id: bot.id }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(client.updateBot({ id: bot.id, name: 'x' }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(client.deleteBot({ id: bot.id }), ResourceNotFoundError, 'ResourceNotFound')
    const { bots } = await client.listBots({ tags: { suite: 'delete' } })
    assert.ok(!bots.some((b) => b.id === bot.id), 'a deleted bot must not be listed')
  })
})

// -------------------------------------------------------------- listBots

describe('listBots', () => {
  test('list.bots({ pageSize: 7 }).collect() returns every bot exactly once across several pages', async () => {
    const tag = unique('paging')
    const created = []
    for (let i = 0; i < 25; i++) {
      const { bot } = await client.createBot({ name: `paging ${i}`, tags: { suite: tag } })
      created.push(bot.id)
    }

    // Walk the pages by hand first: pages are at most 7 bots and chained with meta.nextToken.
    let pages = 0
    let nextToken
    const seen = []
    do {
      const res = await client.listBots({ pageSize: 7, nextToken })
      assert.ok(Array.isArray(res.bots))
      assertPlainObject(res.meta, 'listBots meta')
      assert.ok(res.bots.length <= 7, `page ${pages} has ${res.bots.length} bots, more than pageSize 7`)
      res.bots.forEach(assertBotListItem)
      seen.push(...res.bots.map((b) => b.id))
      nextToken = res.meta.nextToken
      if (nextToken !== undefined) assert.equal(typeof nextToken, 'string')
      pages++
      assert.ok(pages < 100, 'pagination does not end')
    } while (nextToken)
    assert.ok(pages >= 4, `25+ bots at pageSize 7 must take at least 4 pages, took ${pages}`)
    assert.equal(new Set(seen).size, seen.length, 'a bot appeared on two pages')

    const all = await client.list.bots({ pageSize: 7 }).collect()
    const ids = all.map((b) => b.id)
    assert.equal(new Set(ids).size, ids.length, 'collect() returned a bot twice')
    for (const id of created) assert.equal(ids.filter((x) => x === id).length, 1, `bot ${id} missing from collect()`)
    assert.deepEqual([...ids].sort(), [...seen].sort())

    // With the tag filter, exactly the 25.
    const tagged = await client.list.bots({ pageSize: 7, tags: { suite: tag } }).collect()
    assert.deepEqual(tagged.map((b) => b.id).sort(), [...created].sort())
    for (const b of tagged) assert.deepEqual(b.tags, { suite: tag })
  })

  test('sortField and sortDirection order the list', async () => {
    const tag = unique('sort')
    for (let i = 0; i < 5; i++) {
      await client.createBot({ name: `sort ${i}`, tags: { suite: tag } })
      await new Promise((r) => setTimeout(r, 2))
    }
    const asc = await client.list.bots({ tags: { suite: tag }, sortField: 'createdAt', sortDirection: 'asc', pageSize: 2 }).collect()
    const desc = await client.list.bots({ tags: { suite: tag }, sortField: 'createdAt', sortDirection: 'desc', pageSize: 2 }).collect()
    assert.equal(asc.length, 5)
    assert.equal(desc.length, 5)
    const times = (l) => l.map((b) => Date.parse(b.createdAt))
    assert.deepEqual(times(asc), [...times(asc)].sort((a, b) => a - b), 'asc must be ascending by createdAt')
    assert.deepEqual(times(desc), [...times(desc)].sort((a, b) => b - a), 'desc must be descending by createdAt')
    assert.deepEqual(
      asc.map((b) => b.id),
      desc.map((b) => b.id).reverse()
    )
  })

  test('tags filter returns only matching bots (all given tags must match)', async () => {
    const suite = unique('tags')
    const { bot: red1 } = await client.createBot({ name: 'red1', tags: { suite, team: 'red', env: 'prod' } })
    const { bot: red2 } = await client.createBot({ name: 'red2', tags: { suite, team: 'red', env: 'dev' } })
    const { bot: blue } = await client.createBot({ name: 'blue', tags: { suite, team: 'blue', env: 'prod' } })
    const ids = async (tags) => (await client.listBots({ tags })).bots.map((b) => b.id).sort()

    assert.deepEqual(await ids({ suite }), [red1.id, red2.id, blue.id].sort())
    assert.deepEqual(await ids({ suite, team: 'red' }), [red1.id, red2.id].sort())
    assert.deepEqual(await ids({ suite, team: 'red', env: 'prod' }), [red1.id])
    assert.deepEqual(await ids({ suite, team: 'green' }), [])
    // A value with spaces and reserved characters travels RFC 3986-encoded.
    const odd = 'a b+c:d/é'
    const { bot: oddBot } = await client.createBot({ name: 'odd', tags: { suite, odd } })
    assert.deepEqual(await ids({ suite, odd }), [oddBot.id])
  })

  test('dev: true lists only dev bots; the default lists only production bots', async () => {
    const suite = unique('dev')
    const { bot: devBot } = await client.createBot({ name: 'dev', dev: true, tags: { suite } })
    const { bot: prodBot } = await client.createBot({ name: 'prod', tags: { suite } })
    const devList = await client.listBots({ dev: true, tags: { suite } })
    assert.deepEqual(devList.bots.map((b) => b.id), [devBot.id])
    const prodList = await client.listBots({ tags: { suite } })
    assert.deepEqual(prodList.bots.map((b) => b.id), [prodBot.id])
    const prodExplicit = await client.listBots({ dev: false, tags: { suite } })
    assert.deepEqual(prodExplicit.bots.map((b) => b.id), [prodBot.id])
  })

  test('deployedAt appears in list items of deployed bots only', async () => {
    const suite = unique('deployed')
    const { bot: deployed } = await client.createBot({ name: 'deployed', code: 'x', tags: { suite } })
    const { bot: draft } = await client.createBot({ name: 'draft', tags: { suite } })
    const { bots } = await client.listBots({ tags: { suite } })
    const byId = Object.fromEntries(bots.map((b) => [b.id, b]))
    assertIsoDate(byId[deployed.id].deployedAt, 'deployed list item deployedAt')
    assert.equal(byId[draft.id].deployedAt, undefined)
  })
})

// ------------------------------------------------------------ workspaces

describe('workspaces and account', () => {
  test('getAccount returns the bootstrap owner', async () => {
    const { account } = await client.getAccount({})
    assert.equal(typeof account.id, 'string')
    assert.equal(typeof account.email, 'string')
    assert.match(account.email, /@/)
    assert.equal(typeof account.emailVerified, 'boolean')
    assertIsoDate(account.createdAt, 'account.createdAt')
    if (account.displayName !== undefined) assert.equal(typeof account.displayName, 'string')
  })

  test('updateAccount changes the display name and picture; what is left out stays', async () => {
    const before = (await client.getAccount({})).account
    const picture = 'https://example.test/ada.png'
    const { account } = await client.updateAccount({ displayName: '  Ada Lovelace ', profilePicture: picture, refresh: true })
    assert.equal(account.id, before.id)
    assert.equal(account.displayName, 'Ada Lovelace')
    assert.equal(account.profilePicture, picture)
    assertIsoDate(account.createdAt, 'account.createdAt')
    // Read back, through a credential the server had cached before the update.
    assert.deepEqual((await client.getAccount({})).account, account)
    const { members } = await client.listWorkspaceMembers({})
    assert.equal(members.find((m) => m.userId === before.id)?.displayName, 'Ada Lovelace')
    assert.deepEqual((await client.updateAccount({ displayName: 'Ada' })).account, { ...account, displayName: 'Ada' })

    for (const [body, field] of [
      [{ displayName: 'x'.repeat(101) }, 'displayName'],
      [{ profilePicture: 'javascript:alert(1)' }, 'profilePicture'],
      [{ profilePicture: 'not a url' }, 'profilePicture'],
    ]) {
      const err = await rejectsWith(client.updateAccount(body), InvalidPayloadError, 'InvalidPayload')
      assert.match(err.message, new RegExp(field), `the refusal of ${JSON.stringify(body)} names ${field}`)
    }
    assert.equal((await client.getAccount({})).account.displayName, 'Ada', 'a refused update changed nothing')

    const { account: cleared } = await client.updateAccount({ displayName: before.displayName ?? '', profilePicture: '' })
    assert.equal(cleared.profilePicture, undefined)
  })

  test('deleteAccount deletes the caller\'s account, its tokens and memberships; a workspace\'s owner is refused', async () => {
    const email = unique('leaving') + '@example.com'
    const added = await client.createWorkspaceMember({ email, role: 'developer' })
    const leaving = new Client({ apiUrl: server.apiUrl, token: await server.issueToken(email), workspaceId: server.workspaceId })
    const { account } = await leaving.getAccount({})
    // Owning a workspace, it is refused, naming it, and nothing is deleted.
    const owned = await leaving.createWorkspace({ name: unique('owned by the leaver') })
    const err = await rejectsWith(leaving.deleteAccount({}), ReferenceConstraintError, 'ReferenceConstraint')
    assert.match(err.message, new RegExp(owned.id))
    assert.equal((await leaving.getAccount({})).account.id, account.id)
    await leaving.deleteWorkspace({ id: owned.id })

    assert.deepEqual(await leaving.deleteAccount({}), {})
    await rejectsWith(leaving.getAccount({}), UnauthorizedError, 'Unauthorized')
    const { members } = await client.listWorkspaceMembers({})
    assert.ok(!members.some((m) => m.id === added.id || m.email === email), 'the deleted account is no longer a member')
    const { records } = await client.getAuditRecords({ id: server.workspaceId })
    assert.ok(records.some((r) => r.resourceId === account.id && r.value?.startsWith('DELETE_ACCOUNT')), 'the deletion is in the audit log')
    // The server's first account owns its first workspace: refused.
    const first = await rejectsWith(client.deleteAccount({}), ReferenceConstraintError, 'ReferenceConstraint')
    assert.match(first.message, new RegExp(server.workspaceId))
    assert.ok((await client.getAccount({})).account.id)
  })

  test('getPublicWorkspace and listPublicWorkspaces show a workspace once its profile is public, to any account', async () => {
    const { id } = await client.createWorkspace({ name: 'Public Shop' })
    await rejectsWith(client.getPublicWorkspace({ id }), ResourceNotFoundError, 'ResourceNotFound')
    assert.deepEqual((await client.listPublicWorkspaces({ workspaceIds: [id] })).workspaces, [])
    await client.updateWorkspace({ id, isPublic: true, handle: 'public-shop', about: 'We sell bots', website: 'https://shop.example' })
    const ws = await client.getPublicWorkspace({ id })
    assert.deepEqual(Object.keys(ws).sort(), ['about', 'contactEmail', 'createdAt', 'handle', 'id', 'name', 'profilePicture', 'socialAccounts', 'updatedAt', 'website'])
    assert.equal(ws.name, 'Public Shop')
    assert.equal(ws.handle, 'public-shop')
    assert.equal(ws.about, 'We sell bots')
    assert.deepEqual(ws.socialAccounts, [])
    assert.deepEqual((await client.listPublicWorkspaces({ workspaceIds: [id, server.workspaceId] })).workspaces.map((w) => w.id), [id])
    assert.deepEqual((await client.listPublicWorkspaces({ search: 'PUBLIC-SHOP' })).workspaces.map((w) => w.id), [id])
    assert.deepEqual((await client.listPublicWorkspaces({ search: 'no such shop' })).workspaces, [])
    await client.updateWorkspace({ id, isPublic: false })
    await rejectsWith(client.getPublicWorkspace({ id }), ResourceNotFoundError, 'ResourceNotFound')
    await client.deleteWorkspace({ id })
  })

  test('getWorkspace and listWorkspaces return the bootstrap workspace (flat, not wrapped)', async () => {
    const ws = await client.getWorkspace({ id: server.workspaceId })
    assertWorkspaceShape(ws)
    assert.equal(ws.id, server.workspaceId)
    const { account } = await client.getAccount({})
    assert.equal(ws.ownerId, account.id)

    const list = await client.listWorkspaces({})
    assert.ok(Array.isArray(list.workspaces))
    assertPlainObject(list.meta, 'listWorkspaces meta')
    list.workspaces.forEach(assertWorkspaceShape)
    assert.ok(list.workspaces.some((w) => w.id === server.workspaceId))
  })

  test('createWorkspace, updateWorkspace, and a client scoped to the new workspace', async () => {
    const name = unique('Second workspace')
    const ws = await client.createWorkspace({ name })
    assertWorkspaceShape(ws)
    assert.equal(ws.name, name)
    assert.notEqual(ws.id, server.workspaceId)
    assert.equal(ws.botCount, 0)
    const { account } = await client.getAccount({})
    assert.equal(ws.ownerId, account.id)

    const all = await client.list.workspaces({ pageSize: 1 }).collect()
    const ids = all.map((w) => w.id)
    assert.ok(ids.includes(ws.id) && ids.includes(server.workspaceId), 'list.workspaces must page through both workspaces')
    assert.equal(new Set(ids).size, ids.length)

    const handle = `compat-${process.pid}-${Date.now().toString(36)}`
    const updated = await client.updateWorkspace({
      id: ws.id,
      name: 'Renamed workspace',
      about: 'about text',
      contactEmail: 'contact@example.com',
      website: 'https://example.com',
      socialAccounts: ['https://example.com/a'],
      spendingLimit: 42,
      isPublic: false,
      handle,
    })
    assertWorkspaceShape(updated)
    assert.equal(updated.id, ws.id)
    assert.equal(updated.name, 'Renamed workspace')
    assert.equal(updated.about, 'about text')
    assert.equal(updated.contactEmail, 'contact@example.com')
    assert.equal(updated.website, 'https://example.com')
    assert.deepEqual(updated.socialAccounts, ['https://example.com/a'])
    assert.equal(updated.spendingLimit, 42)
    assert.equal(updated.handle, handle)

    const got = await client.getWorkspace({ id: ws.id })
    assert.equal(got.name, 'Renamed workspace')
    assert.equal(got.handle, handle)
    const byHandle = await client.listWorkspaces({ handle })
    assert.deepEqual(byHandle.workspaces.map((w) => w.id), [ws.id])

    // A client pointed at the new workspace sees its bots only.
    const second = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: ws.id })
    const { bot } = await second.createBot({ name: 'in second workspace' })
    const { bots } = await second.listBots({})
    assert.deepEqual(bots.map((b) => b.id), [bot.id])
    await rejectsWith(client.getBot({ id: bot.id }), ResourceNotFoundError, 'ResourceNotFound')
    const after = await client.getWorkspace({ id: ws.id })
    assert.equal(after.botCount, 1, 'botCount must count the workspace bots')
  })

  test('getWorkspace of an unknown workspace rejects with ResourceNotFoundError', async () => {
    await rejectsWith(client.getWorkspace({ id: 'wkspace_doesnotexist0000000000' }), ResourceNotFoundError, 'ResourceNotFound')
  })
})

// ------------------------------------------------------------------ PATs

describe('personal access tokens', () => {
  test('create (value shown once), list (no value), delete (token stops working)', async () => {
    const note = unique('compat pat')
    const created = await client.createPersonalAccessToken({ note })
    const { pat } = created
    assert.equal(typeof pat.id, 'string')
    assertIsoDate(pat.createdAt, 'pat.createdAt')
    assert.equal(pat.note, note)
    assert.equal(typeof pat.value, 'string')
    assert.ok(pat.value.length > 0, 'the PAT value must be returned at creation')

    const patClient = new Client({ apiUrl: server.apiUrl, token: pat.value, workspaceId: server.workspaceId })
    const me = await patClient.getAccount({})
    const owner = await client.getAccount({})
    assert.equal(me.account.id, owner.account.id)
    await patClient.listBots({}) // works in the workspace too

    const { pats } = await client.listPersonalAccessTokens({})
    assert.ok(Array.isArray(pats))
    pats.forEach((t, i) => assertTokenListItem(t, `pats[${i}]`))
    const listed = pats.find((t) => t.id === pat.id)
    assert.ok(listed, 'the new PAT must be listed')
    assert.equal(listed.note, note)
    assert.ok(!JSON.stringify(pats).includes(pat.value), 'listPersonalAccessTokens leaked a token value')

    assert.deepEqual(await client.deletePersonalAccessToken({ id: pat.id }), {})
    await rejectsWith(patClient.getAccount({}), UnauthorizedError, 'Unauthorized')
    await rejectsWith(patClient.listBots({}), UnauthorizedError, 'Unauthorized')
    const after = await client.listPersonalAccessTokens({})
    assert.ok(!after.pats.some((t) => t.id === pat.id), 'a deleted PAT must not be listed')
    await rejectsWith(client.deletePersonalAccessToken({ id: pat.id }), ResourceNotFoundError, 'ResourceNotFound')
  })
})

// ------------------------------------------------------------ bot API keys

describe('bot API keys', () => {
  test('create (flat, with value), list (no value), delete', async () => {
    const { bot } = await client.createBot({ name: 'bak bot' })
    const note = unique('compat bak')
    const bak = await client.createBotApiKey({ botId: bot.id, note })
    assert.equal(typeof bak.id, 'string', 'createBotApiKey answers a flat {id, createdAt, note, value}')
    assertIsoDate(bak.createdAt, 'bak.createdAt')
    assert.equal(bak.note, note)
    assert.equal(typeof bak.value, 'string')
    assert.ok(bak.value.length > 0)

    const { baks } = await client.listBotApiKeys({ botId: bot.id })
    assert.ok(Array.isArray(baks))
    baks.forEach((t, i) => assertTokenListItem(t, `baks[${i}]`))
    assert.deepEqual(baks.map((b) => b.id), [bak.id])
    assert.ok(!JSON.stringify(baks).includes(bak.value))

    // Keys belong to their bot.
    const { bot: other } = await client.createBot({ name: 'other bak bot' })
    assert.deepEqual((await client.listBotApiKeys({ botId: other.id })).baks, [])

    assert.deepEqual(await client.deleteBotApiKey({ id: bak.id }), {})
    assert.deepEqual((await client.listBotApiKeys({ botId: bot.id })).baks, [])
    await rejectsWith(client.deleteBotApiKey({ id: bak.id }), ResourceNotFoundError, 'ResourceNotFound')
  })

  test('createBotApiKey for an unknown bot rejects with ResourceNotFoundError', async () => {
    await rejectsWith(client.createBotApiKey({ botId: 'bot_doesnotexist000000000000', note: 'x' }), ResourceNotFoundError, 'ResourceNotFound')
  })
})

// ------------------------------------------------------- workspace members

describe('workspace members', () => {
  test('list, add a viewer, and the viewer may read but not create bots', async () => {
    const { members, meta } = await client.listWorkspaceMembers({})
    assert.ok(Array.isArray(members))
    assertPlainObject(meta, 'listWorkspaceMembers meta')
    const { account } = await client.getAccount({})
    const owner = members.find((m) => m.email === account.email)
    assert.ok(owner, 'the owner must be a listed member')
    assert.equal(owner.role, 'owner')
    for (const m of members) {
      assert.equal(typeof m.id, 'string')
      assert.equal(typeof m.email, 'string')
      assertIsoDate(m.createdAt, 'member.createdAt')
      assertOneOf(m.role, ['viewer', 'billing', 'developer', 'manager', 'administrator', 'owner'], 'member.role')
    }

    const email = `viewer-${process.pid}-${Date.now().toString(36)}@example.com`
    const added = await client.createWorkspaceMember({ email, role: 'viewer' })
    assert.equal(typeof added.id, 'string')
    assert.equal(added.email, email)
    assert.equal(added.role, 'viewer')
    assertIsoDate(added.createdAt, 'createWorkspaceMember createdAt')

    const all = await client.list.workspaceMembers({ pageSize: 1 }).collect()
    assert.ok(all.some((m) => m.id === added.id && m.role === 'viewer'), 'the viewer must be listed')

    await rejectsWith(client.createWorkspaceMember({ email, role: 'viewer' }), AlreadyExistsError, 'AlreadyExists')

    const viewerToken = await server.issueToken(email)
    assert.ok(viewerToken.length > 0, '`botplatform token` printed nothing')
    const viewer = new Client({ apiUrl: server.apiUrl, token: viewerToken, workspaceId: server.workspaceId })
    const me = await viewer.getAccount({})
    assert.equal(me.account.email, email)
    const ws = await viewer.getWorkspace({ id: server.workspaceId })
    assert.equal(ws.id, server.workspaceId)
    const { bot } = await client.createBot({ name: 'owner bot for viewer' })
    assert.equal((await viewer.getBot({ id: bot.id })).bot.id, bot.id)
    await viewer.listBots({})

    await rejectsWith(viewer.createBot({ name: 'viewer bot' }), ForbiddenError, 'Forbidden')
    await rejectsWith(viewer.updateBot({ id: bot.id, name: 'renamed by viewer' }), ForbiddenError, 'Forbidden')
    await rejectsWith(viewer.deleteBot({ id: bot.id }), ForbiddenError, 'Forbidden')
    await rejectsWith(viewer.createWorkspaceMember({ email: 'x@example.com', role: 'viewer' }), ForbiddenError, 'Forbidden')
    assert.equal((await client.getBot({ id: bot.id })).bot.name, 'owner bot for viewer')

    // The viewer is not a member of other workspaces: an unknown workspace for them, so 401.
    const ws2 = await client.createWorkspace({ name: unique('owner only') })
    const outsider = new Client({ apiUrl: server.apiUrl, token: viewerToken, workspaceId: ws2.id })
    await rejectsWith(outsider.listBots({}), UnauthorizedError, 'Unauthorized')
  })
})

// ------------------------------------------------------------------ errors

describe('errors', () => {
  test('InvalidPayloadError for bodies the server must reject', async () => {
    await rejectsWith(client.createBot({ name: '' }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(client.createWorkspace({ name: '' }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(client.createBot({ description: 'x'.repeat(2001) }), InvalidPayloadError, 'InvalidPayload')
    // The client drops unknown top-level fields, but sends nested objects as given.
    await rejectsWith(
      client.createBot({ configuration: { data: {}, bogus: 1 } }),
      InvalidPayloadError,
      'InvalidPayload'
    )
    await rejectsWith(
      client.createBot({ medias: [{ url: 'https://example.com/x', name: 'x', extra: true }] }),
      InvalidPayloadError,
      'InvalidPayload'
    )
    await rejectsWith(client.createBot({ states: { s: { type: 'nope', schema: {} } } }), InvalidPayloadError, 'InvalidPayload')

    const { bot } = await client.createBot({ name: 'invalid updates' })
    await rejectsWith(client.updateBot({ id: bot.id, tags: { long: 'v'.repeat(501) } }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(client.updateBot({ id: bot.id, name: '' }), InvalidPayloadError, 'InvalidPayload')
    // Unknown fields are not sent by the client, so this update is a no-op that succeeds.
    await client.updateBot({ id: bot.id, ...{ bogus: 1 } })
    // The bot is unchanged by the rejected updates.
    const { bot: got } = await client.getBot({ id: bot.id })
    assert.equal(got.name, 'invalid updates')
    assert.deepEqual(got.tags, {})
  })

  test('UnauthorizedError for a bad or a missing token', async () => {
    const bad = new Client({ apiUrl: server.apiUrl, token: 'bp_pat_' + 'x'.repeat(40), workspaceId: server.workspaceId })
    await rejectsWith(bad.listBots({}), UnauthorizedError, 'Unauthorized')
    await rejectsWith(bad.getAccount({}), UnauthorizedError, 'Unauthorized')
    await rejectsWith(bad.createBot({ name: 'x' }), UnauthorizedError, 'Unauthorized')

    const garbage = new Client({ apiUrl: server.apiUrl, token: 'not-a-token', workspaceId: server.workspaceId })
    await rejectsWith(garbage.getBot({ id: 'bot_x' }), UnauthorizedError, 'Unauthorized')

    const none = new Client({ apiUrl: server.apiUrl, workspaceId: server.workspaceId })
    await rejectsWith(none.listBots({}), UnauthorizedError, 'Unauthorized')
  })

  test('UnauthorizedError for a missing or unknown workspaceId', async () => {
    const noWorkspace = new Client({ apiUrl: server.apiUrl, token: server.token })
    await rejectsWith(noWorkspace.listBots({}), UnauthorizedError, 'Unauthorized')
    await rejectsWith(noWorkspace.createBot({ name: 'x' }), UnauthorizedError, 'Unauthorized')
    // Account routes need only the token.
    await noWorkspace.getAccount({})

    const unknown = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: 'wkspace_doesnotexist0000000000' })
    await rejectsWith(unknown.listBots({}), UnauthorizedError, 'Unauthorized')
    await rejectsWith(unknown.getBot({ id: 'bot_x' }), UnauthorizedError, 'Unauthorized')
  })

  test('ResourceNotFoundError for an unknown bot id', async () => {
    const id = 'bot_doesnotexist000000000000'
    await rejectsWith(client.getBot({ id }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(client.updateBot({ id, name: 'x' }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(client.deleteBot({ id }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(client.listBotApiKeys({ botId: id }), ResourceNotFoundError, 'ResourceNotFound')
    // Path parameters are encodeURIComponent-escaped by the client.
    await rejectsWith(client.getBot({ id: 'a/b c' }), ResourceNotFoundError, 'ResourceNotFound')
  })

  test('error bodies: every field the client needs, code matching the type', async () => {
    const err = await rejectsWith(client.getBot({ id: 'bot_doesnotexist000000000000' }), ResourceNotFoundError, 'ResourceNotFound')
    assert.equal(err.code, 404)
    assert.match(err.id, /^err_\d{14}x[0-9A-F]{8}$/, `error id ${err.id} should look like err_YYYYMMDDHHMMSSx + 8 hex`)

    const { res, body } = await rawFetch('/v1/admin/bots/bot_doesnotexist000000000000')
    assert.equal(res.status, 404)
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
    assert.equal(body.code, 404)
    assert.equal(body.type, 'ResourceNotFound')
    assert.match(body.id, ERROR_ID_RE)
    assert.equal(typeof body.message, 'string')
  })

  test('PATCH /v1/admin/bots answers 405 with a MethodNotFound JSON body', async () => {
    const { res, body } = await rawFetch('/v1/admin/bots', { method: 'PATCH', body: '{}' })
    assert.equal(res.status, 405)
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
    assert.equal(body.type, 'MethodNotFound')
    assert.equal(body.code, 405)
    assert.match(body.id, ERROR_ID_RE)
    assert.equal(typeof body.message, 'string')
    assert.ok(body.message.length > 0)
    // The client's own converter classifies this body as MethodNotFoundError.
    const err = errorFrom(body)
    assert.ok(err instanceof MethodNotFoundError, `errorFrom gave type=${err.type}: ${err.message}`)
    assert.equal(err.id, body.id)
  })

  test('an unknown admin route answers 404 with a ResourceNotFound JSON body', async () => {
    const { res, body } = await rawFetch('/v1/admin/no-such-route')
    assert.equal(res.status, 404)
    assert.equal(body.type, 'ResourceNotFound')
    assert.equal(body.code, 404)
    assert.match(body.id, ERROR_ID_RE)
    assert.ok(errorFrom(body) instanceof ResourceNotFoundError)
  })
})

test('a bot sets its own tags with updateBot and its API key (the agent kit keeps its bot\'s tags so), and nothing else', async () => {
  const { bot } = await client.createBot({ name: 'tagged by itself', tags: { team: 'support' } })
  const { bot: other } = await client.createBot({ name: 'another' })
  const bak = await client.createBotApiKey({ botId: bot.id, note: unique('own tags') })
  const asBot = new Client({ apiUrl: server.apiUrl, token: bak.value, botId: bot.id })

  const { bot: updated } = await asBot.updateBot({ id: bot.id, tags: { stage: 'beta', team: null } })
  assert.deepEqual(updated.tags, { stage: 'beta' })
  assert.deepEqual((await client.getBot({ id: bot.id })).bot.tags, { stage: 'beta' })

  await assert.rejects(asBot.updateBot({ id: bot.id, name: 'renamed' }), (err) => {
    assert.equal(err.type, 'Forbidden')
    assert.match(err.message, /^name: a bot API key may change its bot's tags only/)
    return true
  })
  await assert.rejects(asBot.updateBot({ id: other.id, tags: { x: 'y' } }), (err) => err.type === 'Forbidden')
  const { bot: after } = await client.getBot({ id: bot.id })
  assert.equal(after.name, 'tagged by itself')
  assert.deepEqual((await client.getBot({ id: other.id })).bot.tags, {})
})

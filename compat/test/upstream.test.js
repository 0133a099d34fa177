// Integrations of the public botpress/botpress repository at c988a9d (the
// commit that released @botpress/cli 0.8.59; a snapshot is in
// ../shared/upstream/botpress-c988a9d), built from source unchanged with the
// packages of that generation (upstream/package.json) and deployed with
// `bp deploy`, as docs/integrations.md tells an operator to do.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import { execFile, execFileSync } from 'node:child_process'
import https from 'node:https'
import os from 'node:os'
import path from 'node:path'
import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'
import { runBp } from '../support/bp.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

// Where the stand-in of the Telegram Bot API listens: api.telegram.org's
// port, on an address of this machine that stands for Telegram's.
const telegramAddr = '127.0.0.3'

// telegramStandIn serves the Bot API methods telegram 0.4.5 calls, over TLS
// with a self-signed certificate for api.telegram.org, and records them.
// Port 443 needs the right to bind it: without it, the Telegram test is
// skipped, saying so.
async function telegramStandIn(dir) {
  const key = path.join(dir, 'telegram-key.pem')
  const caFile = path.join(dir, 'telegram-cert.pem')
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '2',
    '-subj', '/CN=api.telegram.org', '-addext', 'subjectAltName=DNS:api.telegram.org', '-keyout', key, '-out', caFile], { stdio: 'ignore' })
  const calls = []
  let messageId = 100
  const answer = (method, body) => {
    switch (method) {
      case 'setWebhook': case 'deleteWebhook': return true
      case 'getUserProfilePhotos': return { total_count: 0, photos: [] }
      case 'sendMessage': return { message_id: ++messageId, date: Math.floor(Date.now() / 1000), chat: { id: Number(body.chat_id), type: 'private' }, text: body.text }
      default: return undefined
    }
  }
  const server = https.createServer({ key: await fs.readFile(key), cert: await fs.readFile(caFile) }, (req, res) => {
    let raw = ''
    req.on('data', (c) => { raw += c })
    req.on('end', () => {
      const [, token, method] = req.url.match(/^\/bot([^/]+)\/(\w+)/) ?? []
      const body = raw ? JSON.parse(raw) : {}
      calls.push({ token, method, body })
      const result = answer(method, body)
      res.writeHead(result === undefined ? 404 : 200, { 'content-type': 'application/json' })
      res.end(JSON.stringify(result === undefined ? { ok: false, error_code: 404, description: 'Not Found' } : { ok: true, result }))
    })
  })
  const listening = await new Promise((resolve) => {
    server.once('error', (err) => resolve(err))
    server.listen(443, telegramAddr, () => resolve(true))
  })
  if (listening !== true) {
    console.log(`upstream: the Telegram stand-in cannot listen on ${telegramAddr}:443 (${listening.code}): its test is skipped`)
    return { caFile, calls, skip: `the stand-in cannot listen on ${telegramAddr}:443 (${listening.code})` }
  }
  return { caFile, calls, server }
}

const kit = path.resolve(import.meta.dirname, '..', 'upstream')
// The snapshot beside the repository (BOTPLATFORM_UPSTREAM names another
// place). Without it the suite is skipped, saying so.
const snapshot = process.env.BOTPLATFORM_UPSTREAM ?? path.resolve(import.meta.dirname, '..', '..', '..', 'shared', 'upstream', 'botpress-c988a9d')
const skip = !existsSync(path.join(snapshot, 'integrations')) && `no snapshot of botpress/botpress at ${snapshot} (set BOTPLATFORM_UPSTREAM)`
if (skip) console.log(`upstream: skipped: ${skip}`)
const bpBin = path.join(kit, 'node_modules/@botpress/cli/bin.js')

let server, client, home, work, telegram

const bp = (dir, args, opts) => runBp(bpBin, dir, home, args, opts)

before(async () => {
  if (skip) return
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'bp-home-'))
  telegram = await telegramStandIn(home)
  // The operator points integration code's api.telegram.org at the
  // stand-in and has it trust the stand-in's certificate (docs/integrations.md).
  server = await startServer({ args: ['--bot-hosts', `api.telegram.org=${telegramAddr}`, '--bot-ca-file', telegram.caFile] })
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  // The monorepo's layout, inside the kit so that its packages resolve: the
  // root tsconfig.json the packages extend, the integrations, and
  // @botpress/sdk-addons (a workspace package there) as a module.
  work = await fs.mkdtemp(path.join(kit, '.work-'))
  await fs.copyFile(path.join(snapshot, 'tsconfig.json'), path.join(work, 'tsconfig.json'))
  await fs.cp(path.join(snapshot, 'integrations'), path.join(work, 'integrations'), { recursive: true })
  await fs.cp(path.join(snapshot, 'bots'), path.join(work, 'bots'), { recursive: true })
  await fs.cp(path.join(snapshot, 'packages', 'sdk-addons'), path.join(work, 'node_modules', '@botpress', 'sdk-addons'), { recursive: true })
  await bp(work, ['login', '--apiUrl', server.apiUrl, '--token', server.token, '--workspaceId', server.workspaceId, '-y'])
  await client.updateWorkspace({ id: server.workspaceId, handle: 'upstream' })
})

after(async () => {
  await server?.stop()
  telegram?.server?.close()
  if (work) await fs.rm(work, { recursive: true, force: true })
  if (home) await fs.rm(home, { recursive: true, force: true })
})

test('the webhook integration: deployed from source, installed, a webhook becomes the bot\'s event', { skip }, async () => {
  const out = await bp(path.join(work, 'integrations', 'webhook'), ['deploy', '-y'])
  assert.match(out, /Integration deployed/, out)
  const { integration } = await client.getIntegrationByName({ name: 'upstream/webhook', version: 'latest' })
  assert.equal(integration.version, '0.4.1')
  assert.deepEqual(Object.keys(integration.events), ['event'])
  assert.deepEqual(integration.secrets, []) // its Sentry secrets are optional, and were left unset

  const { bot } = await client.createBot({
    name: 'hooked',
    code: "bot.on.event('*', async ({ event, logger }) => {\n  logger.info('got ' + event.type + ' ' + JSON.stringify(event.payload))\n})",
  })
  const { bot: updated } = await client.updateBot({ id: bot.id, integrations: { [integration.id]: { enabled: true, configuration: { secret: 's3' } } } })
  const installed = updated.integrations[integration.id]
  assert.equal(installed.status, 'registered')

  // Its handler checks the secret header: without it, the integration's error
  // comes back (SDK 0.10 answers an Error it did not expect with 400).
  const refused = await fetch(installed.webhookUrl, { method: 'POST', body: '{}' })
  assert.equal(refused.status, 400)
  assert.match((await refused.json()).message, /unexpected error occurred in the integration/)
  const res = await fetch(installed.webhookUrl + '/orders?id=7', {
    method: 'POST', headers: { 'content-type': 'application/json', 'x-bp-secret': 's3' }, body: JSON.stringify({ total: 12 }),
  })
  assert.equal(res.status, 200)

  const deadline = Date.now() + 60_000
  for (;;) {
    const { logs } = await client.getBotLogs({ id: bot.id, timeStart: '2020-01-01T00:00:00Z' })
    const line = logs.find((l) => l.message.startsWith('got webhook:event'))
    if (line) {
      const payload = JSON.parse(line.message.slice('got webhook:event '.length))
      assert.deepEqual(payload, { body: { total: 12 }, query: { id: '7' }, method: 'POST', path: '/orders' })
      break
    }
    if (Date.now() > deadline) assert.fail(`the bot got no event; its logs:\n${logs.map((l) => `${l.level} ${l.message}`).join('\n')}`)
    await new Promise((r) => setTimeout(r, 200))
  }
})

test('the hub is stocked with the SDK\'s interfaces by the operator\'s script', { skip }, async () => {
  const script = path.resolve(import.meta.dirname, '..', '..', 'scripts', 'stock-hub', 'interfaces.mjs')
  const args = [script, '--apiUrl', server.apiUrl, '--token', server.token, '--workspaceId', server.workspaceId]
  const run = () => new Promise((resolve, reject) => execFile(process.execPath, args, { cwd: kit }, (err, stdout, stderr) =>
    err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolve(stdout)))
  const out = await run()
  assert.match(out, /hitl@0\.2\.0: created/)
  assert.match(out, /listable@0\.0\.1: created/)
  assert.match(await run(), /hitl@0\.2\.0: already there/) // run again, nothing changes
  const { interface: hitl } = await client.getInterfaceByName({ name: 'hitl', version: '0.2.0' })
  assert.equal(hitl.public, true)
  assert.ok(Object.keys(hitl.actions).length > 0)
  const { interfaces } = await client.listPublicInterfaces({})
  assert.ok(interfaces.some((i) => i.name === 'llm'))
})

test('the integrations the repository\'s bots install deploy from source', { skip }, async () => {
  // The secrets of their OAuth apps, which an operator registers with the provider.
  const secrets = {
    linear: ['CLIENT_ID=lin-client', 'CLIENT_SECRET=lin-secret', 'WEBHOOK_SIGNING_SECRET=lin-signing'],
    slack: ['CLIENT_ID=slack-client', 'CLIENT_SECRET=slack-secret', 'SIGNING_SECRET=slack-signing'],
  }
  for (const name of ['telegram', 'zendesk', 'gsheets', 'linear', 'slack', 'github']) {
    const dir = path.join(work, 'integrations', name)
    // Their definitions use what the CLI calls deprecated (user.creation):
    // the repository deployed them over earlier versions that had it.
    const out = await bp(dir, ['deploy', '-y', '--allowDeprecated', ...(secrets[name] ?? []).flatMap((s) => ['--secrets', s])])
    assert.match(out, /Integration deployed/, `${name}:\n${out}`)
    const { integration } = await client.getIntegrationByName({ name: `upstream/${name}`, version: 'latest' })
    assert.ok(Object.keys(integration.channels).length + Object.keys(integration.actions).length + Object.keys(integration.events).length > 0, name)
    assert.deepEqual(integration.secrets, (secrets[name] ?? []).map((s) => s.split('=')[0]).sort(), name)
    if (name === 'zendesk') {
      const { interface: hitl } = await client.getInterfaceByName({ name: 'hitl', version: '0.2.0' })
      const impl = Object.values(integration.interfaces)
      assert.deepEqual(impl.map((e) => [e.id, e.name, e.version]), [[hitl.id, 'hitl', '0.2.0']], JSON.stringify(integration.interfaces))
    }
  }
})

test('the repository\'s bots deploy with their integrations, each installation registered or saying why not', { skip }, async () => {
  const bots = { 'hit-looper': ['zendesk', 'telegram'], sheetzy: ['telegram', 'gsheets'], sinlin: ['linear', 'telegram'], bugbuster: ['linear', 'github', 'slack'] }
  for (const [name, integrations] of Object.entries(bots)) {
    const dir = path.join(work, 'bots', name)
    // What the bot's integrations.ts script does.
    for (const i of integrations) await bp(dir, ['add', path.join(work, 'integrations', i), '-y'])
    const out = await bp(dir, ['deploy', '-y', '--createNewBot'])
    const id = out.match(/Bot created with ID "([^"]+)"/)?.[1]
    assert.ok(id, `${name}: no bot id in:\n${out}`)
    assert.match(out, /Bot deployed/, `${name}:\n${out}`)
    const { bot } = await client.getBot({ id })
    const installed = Object.values(bot.integrations).filter((i) => i.name !== 'chat')
    assert.deepEqual(installed.map((i) => i.name).sort(), integrations.map((i) => `upstream/${i}`).sort(), name)
    for (const i of installed) {
      assert.ok(i.status === 'registered' || (i.status === 'registration_failed' && i.statusReason), `${name}: ${i.name} ${i.status} ${i.statusReason}`)
    }
    // The bot declares no configuration for telegram: its schema wants a botToken.
    if (integrations.includes('telegram')) {
      const telegram = installed.find((i) => i.name === 'upstream/telegram')
      assert.equal(telegram.status, 'registration_failed')
      assert.match(telegram.statusReason, /^configuration: botToken/)
    }
  }
})

test('telegram 0.4.5 against a stand-in of the Telegram Bot API: register sets the webhook, a message in, the echo out', { skip }, async (t) => {
  if (telegram.skip) return t.skip(telegram.skip)
  const { integration } = await client.getIntegrationByName({ name: 'upstream/telegram', version: 'latest' })
  assert.equal(integration.version, '0.4.5')
  const { bot } = await client.createBot({
    name: 'telegram-echo',
    code: "bot.on.message('*', async ({ message, client }) => {\n  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'echo: ' + message.payload.text } })\n})",
  })
  const token = '123456:stand-in-token'
  const { bot: updated } = await client.updateBot({ id: bot.id, integrations: { [integration.id]: { enabled: true, configuration: { botToken: token } } } })
  const installed = updated.integrations[integration.id]
  assert.equal(installed.status, 'registered', installed.statusReason)
  assert.deepEqual(telegram.calls.map((c) => [c.token, c.method, c.body.url]), [[token, 'setWebhook', installed.webhookUrl]])

  // What Telegram posts to the webhook when a user writes to the bot.
  const update = {
    update_id: 1,
    message: { message_id: 7, date: Math.floor(Date.now() / 1000), text: 'hello', chat: { id: 4242, type: 'private', first_name: 'Ada' },
      from: { id: 4242, is_bot: false, first_name: 'Ada', last_name: 'Lovelace' } },
  }
  const res = await fetch(installed.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(update) })
  assert.equal(res.status, 200, await res.text())

  const deadline = Date.now() + 60_000
  for (;;) {
    const sent = telegram.calls.find((c) => c.method === 'sendMessage')
    if (sent) {
      assert.equal(sent.token, token)
      assert.deepEqual({ chat: String(sent.body.chat_id), text: sent.body.text }, { chat: '4242', text: 'echo: hello' })
      break
    }
    if (Date.now() > deadline) {
      const { logs } = await client.getBotLogs({ id: bot.id, timeStart: '2020-01-01T00:00:00Z' })
      assert.fail(`no reply reached the stand-in; its calls: ${JSON.stringify(telegram.calls)}; the bot's logs:\n${logs.map((l) => `${l.level} ${l.message}`).join('\n')}`)
    }
    await new Promise((r) => setTimeout(r, 200))
  }
  // The user as the integration made it, named after the Telegram user, and the conversation tagged with the chat.
  const runtime = new Client({ apiUrl: server.apiUrl, token: server.token, botId: bot.id })
  const { conversations } = await runtime.listConversations({ tags: { 'telegram:id': '4242' } })
  assert.equal(conversations.length, 1)
  const { messages } = await runtime.listMessages({ conversationId: conversations[0].id })
  assert.deepEqual(messages.map((m) => [m.direction, m.payload.text]).sort(), [['incoming', 'hello'], ['outgoing', 'echo: hello']])
  const incoming = messages.find((m) => m.direction === 'incoming')
  const { user } = await runtime.getUser({ id: incoming.userId })
  assert.equal(user.name, 'Ada Lovelace')
  assert.equal(user.tags['telegram:id'], '4242')
  assert.ok(telegram.calls.some((c) => c.method === 'getUserProfilePhotos' && c.body.user_id === 4242))

  // Removing the installation calls unregister: the webhook is deleted.
  await client.updateBot({ id: bot.id, integrations: { [integration.id]: null } })
  assert.ok(telegram.calls.some((c) => c.method === 'deleteWebhook' && c.token === token && c.body.drop_pending_updates === true), JSON.stringify(telegram.calls))
})

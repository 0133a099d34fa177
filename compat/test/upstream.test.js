// Integrations of the public botpress/botpress repository at c988a9d (the
// commit that released @botpress/cli 0.8.59; a snapshot is in
// ../shared/upstream/botpress-c988a9d), built from source unchanged with the
// packages of that generation (upstream/package.json) and deployed with
// `bp deploy`, as docs/integrations.md tells an operator to do.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import fs from 'node:fs/promises'
import { execFile } from 'node:child_process'
import os from 'node:os'
import path from 'node:path'
import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'
import { runBp } from '../support/bp.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const kit = path.resolve(import.meta.dirname, '..', 'upstream')
// The snapshot beside the repository (BOTPLATFORM_UPSTREAM names another
// place). Without it the suite is skipped, saying so.
const snapshot = process.env.BOTPLATFORM_UPSTREAM ?? path.resolve(import.meta.dirname, '..', '..', '..', 'shared', 'upstream', 'botpress-c988a9d')
const skip = !existsSync(path.join(snapshot, 'integrations')) && `no snapshot of botpress/botpress at ${snapshot} (set BOTPLATFORM_UPSTREAM)`
if (skip) console.log(`upstream: skipped: ${skip}`)
const bpBin = path.join(kit, 'node_modules/@botpress/cli/bin.js')

let server, client, home, work

const bp = (dir, args, opts) => runBp(bpBin, dir, home, args, opts)

before(async () => {
  if (skip) return
  server = await startServer()
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'bp-home-'))
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

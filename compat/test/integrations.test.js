// Integrations deployed with @botpress/cli, unchanged (docs/integrations.md):
// the CLI's own three integration templates, built with the packages of
// their generation (integrations/package.json: CLI 0.8.59, SDK 0.10.10,
// client 0.29.1), deploy to the workspace under its handle, deploy again
// as an update, and read back through the official client as the CLI sent
// them; published, the hub shows them to another workspace.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'
import { runBp, startBp } from '../support/bp.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const kit = path.resolve(import.meta.dirname, '..', 'integrations')
const bpBin = path.join(kit, 'node_modules/@botpress/cli/bin.js')
const templates = path.join(kit, 'node_modules/@botpress/cli/templates')

let server, client, home, work
// The provider the webhook-message template posts the bot's replies to:
// 127.0.0.2 stands for a service outside (the sandbox reaches it through
// --bot-egress-ports, with --bot-fetch-private since it is loopback).
let provider, providerUrl
const received = []

/** Runs bp in dir to the end; rejects with its output when it fails. */
const bp = (dir, args, opts) => runBp(bpBin, dir, home, args, opts)

/** A copy of a CLI template, inside the kit so that its packages resolve. */
async function template(name) {
  const dir = path.join(work, name)
  await fs.cp(path.join(templates, name), dir, { recursive: true })
  return dir
}

before(async () => {
  provider = http.createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      received.push({ method: req.method, url: req.url, body: JSON.parse(body || '{}') })
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise((r) => provider.listen(0, '127.0.0.2', r))
  providerUrl = `http://127.0.0.2:${provider.address().port}/replies`
  server = await startServer({ args: ['--bot-egress-ports', String(provider.address().port), '--bot-fetch-private'] })
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'bp-home-'))
  work = await fs.mkdtemp(path.join(kit, '.work-'))
  await bp(work, ['login', '--apiUrl', server.apiUrl, '--token', server.token, '--workspaceId', server.workspaceId, '-y'])
})

after(async () => {
  await server?.stop()
  provider?.close()
  await fs.rm(work, { recursive: true, force: true })
  await fs.rm(home, { recursive: true, force: true })
})

test('without a workspace handle, bp deploy of an integration stops and says why', async () => {
  const dir = await template('empty-integration')
  await assert.rejects(bp(dir, ['deploy', '-y']), /workspace handle/)
  const { integrations } = await client.listIntegrations({})
  assert.deepEqual(integrations, [])
})

test('the CLI templates deploy under the workspace handle, with their definitions, icon and readme', async () => {
  const { available } = await client.checkHandleAvailability({ handle: 'compat' })
  assert.equal(available, true)
  await client.updateWorkspace({ id: server.workspaceId, handle: 'compat' })

  for (const name of ['empty-integration', 'hello-world', 'webhook-message']) {
    const dir = await template(name)
    const out = await bp(dir, ['deploy', '-y'])
    assert.match(out, /Integration deployed/, out)
    const { integration } = await client.getIntegrationByName({ name: `compat/${name}`, version: '0.0.1' })
    assert.equal(integration.version, '0.0.1')
    assert.equal(integration.visibility, 'private')
    assert.equal(integration.dev, false)
    assert.match(integration.iconUrl, /^data:image\/svg\+xml;base64,/)
    const readme = Buffer.from(integration.readmeUrl.split(',')[1], 'base64').toString()
    assert.equal(readme, await fs.readFile(path.join(dir, 'hub.md'), 'utf8'))
    const icon = Buffer.from(integration.iconUrl.split(',')[1], 'base64').toString()
    assert.equal(icon, await fs.readFile(path.join(dir, 'icon.svg'), 'utf8'))
  }

  const { integration: hello } = await client.getIntegrationByName({ name: 'compat/hello-world', version: 'latest' })
  assert.deepEqual(Object.keys(hello.actions), ['helloWorld'])
  assert.equal(hello.actions.helloWorld.title, 'Hello World')
  assert.equal(hello.actions.helloWorld.input.schema.properties.name.type, 'string')
  assert.deepEqual(hello.actions.helloWorld.output.schema.required, ['message'])

  const { integration: webhook } = await client.getIntegrationByName({ name: 'compat/webhook-message', version: '0.0.1' })
  assert.deepEqual(Object.keys(webhook.channels), ['webhook'])
  assert.deepEqual(Object.keys(webhook.channels.webhook.messages), ['text'])
  assert.equal(webhook.channels.webhook.conversation.tags.id.title, 'Conversation ID')
  assert.equal(webhook.user.tags.id.title, 'User ID')
  assert.equal(webhook.configuration.schema.properties.webhookUrl.type, 'string')

  const { integrations } = await client.listIntegrations({})
  assert.deepEqual(integrations.map((i) => i.name).sort(), ['compat/empty-integration', 'compat/hello-world', 'compat/webhook-message'])
})

test('bp deploy again updates the version in place: what the definition no longer declares is gone', async () => {
  const dir = path.join(work, 'hello-world')
  const def = path.join(dir, 'integration.definition.ts')
  const src = await fs.readFile(def, 'utf8')
  await fs.writeFile(def, src.replace("title: 'Hello World'", "title: 'Hello Again'").replace('helloWorld: {', 'greet: {'))
  const { integration: before } = await client.getIntegrationByName({ name: 'compat/hello-world', version: '0.0.1' })
  const out = await bp(dir, ['deploy', '-y'])
  assert.match(out, /already exists/, out)
  assert.match(out, /Integration deployed/, out)
  const { integration: after } = await client.getIntegrationByName({ name: 'compat/hello-world', version: '0.0.1' })
  assert.equal(after.id, before.id)
  assert.deepEqual(Object.keys(after.actions), ['greet'])
  assert.equal(after.actions.greet.title, 'Hello Again')
})

test('published, a version is in the hub for another workspace, and stays as it is', async () => {
  const dir = path.join(work, 'webhook-message')
  const def = path.join(dir, 'integration.definition.ts')
  await fs.writeFile(def, (await fs.readFile(def, 'utf8')).replace("version: '0.0.1'", "version: '0.1.0'"))
  const out = await bp(dir, ['deploy', '-y', '--public'])
  assert.match(out, /Integration deployed/, out)

  const { id: otherWs } = await client.createWorkspace({ name: 'another' })
  const other = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: otherWs })
  const { integration } = await other.getPublicIntegration({ name: 'compat/webhook-message', version: 'latest' })
  assert.equal(integration.version, '0.1.0')
  assert.equal(integration.ownerWorkspace.handle, 'compat')
  const { integrations } = await other.listPublicIntegrations({})
  assert.ok(integrations.some((i) => i.name === 'compat/webhook-message' && i.version === '0.1.0'))
  assert.ok(!integrations.some((i) => i.name === 'compat/hello-world'), 'a private integration is not in the hub')
  await assert.rejects(other.getPublicIntegration({ name: 'compat/hello-world', version: '0.0.1' }), (e) => e.code === 404)

  await assert.rejects(bp(dir, ['deploy', '-y']), /already deployed publicly|bump the version|new version/)
})

test('a bot installs a deployed integration: register runs in its code, its action answers, its logs are the bot\'s', async () => {
  // The definition as the template has it again (the test above renamed its action).
  const dir = path.join(work, 'hello-world')
  await fs.copyFile(path.join(templates, 'hello-world', 'integration.definition.ts'), path.join(dir, 'integration.definition.ts'))
  await bp(dir, ['deploy', '-y'])
  const { integration } = await client.getIntegrationByName({ name: 'compat/hello-world', version: '0.0.1' })
  const { bot } = await client.createBot({ name: 'installer' })
  const { bot: updated } = await client.updateBot({ id: bot.id, integrations: { [integration.id]: { enabled: true, configuration: {} } } })
  const installed = updated.integrations[integration.id]
  // The template's register handler throws RuntimeError('Invalid configuration').
  assert.equal(installed.status, 'registration_failed')
  assert.equal(installed.statusReason, 'Invalid configuration')
  assert.equal(installed.name, 'compat/hello-world')
  // Keyed by its id (as CLI 0.8.59 installs it), its alias is its name without the handle.
  const res0 = await fetch(`${server.apiUrl}/v1/admin/bots/${bot.id}`, {
    headers: { authorization: `Bearer ${server.token}`, 'x-workspace-id': server.workspaceId, 'x-multiple-integrations': 'true' },
  })
  assert.equal((await res0.json()).bot.integrations['hello-world'].id, integration.id)
  assert.equal(installed.version, '0.0.1')
  assert.match(installed.webhookUrl, new RegExp(`/webhooks/${installed.webhookId}$`))

  const botClient = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId, botId: bot.id })
  const res = await botClient.callAction({ type: 'hello-world:helloWorld', input: { name: 'Ada' } })
  assert.deepEqual(res.output, { message: 'Hello "Ada"! Nice to meet you ;)' })
  await assert.rejects(botClient.callAction({ type: 'hello-world:nope', input: {} }), (e) => e.type === 'Runtime' && /nope/.test(e.message))

  const deadline = Date.now() + 30_000
  for (;;) {
    const { logs } = await client.getBotLogs({ id: bot.id, timeStart: '2020-01-01T00:00:00Z' })
    if (logs.some((l) => l.message.includes('[hello-world]') && l.message.includes('Hello World!'))) break
    if (Date.now() > deadline) assert.fail(`no log line of the integration; the bot's logs:\n${logs.map((l) => l.message).join('\n')}`)
    await new Promise((r) => setTimeout(r, 200))
  }

  // Removed, its key no longer works and its actions are gone.
  const { bot: removed } = await client.updateBot({ id: bot.id, integrations: { [integration.id]: null } })
  assert.equal(removed.integrations[integration.id], undefined)
  await assert.rejects(botClient.callAction({ type: 'hello-world:helloWorld', input: {} }), (e) => e.code === 404)
})

test('webhook in, bot reply out: a provider\'s webhook reaches the bot through the integration, and the reply reaches the provider', async () => {
  const { integration } = await client.getIntegrationByName({ name: 'compat/webhook-message', version: '0.0.1' })
  const { bot } = await client.createBot({
    name: 'webhook-echo',
    code: "bot.on.message('*', async ({ message, client }) => {\n  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'echo: ' + message.payload.text } })\n})",
  })
  const { bot: updated } = await client.updateBot({ id: bot.id, integrations: { [integration.id]: { enabled: true, configuration: { webhookUrl: providerUrl } } } })
  const installed = updated.integrations[integration.id]
  assert.equal(installed.status, 'registration_failed') // the template's register throws
  // A configuration the integration's schema refuses is not registered, and the installation says why.
  const { bot: refused } = await client.updateBot({ id: bot.id, integrations: { [integration.id]: { configuration: { webhookUrl: 42 } } } })
  assert.equal(refused.integrations[integration.id].status, 'registration_failed')
  assert.match(refused.integrations[integration.id].statusReason, /^configuration: webhookUrl: /)
  await client.updateBot({ id: bot.id, integrations: { [integration.id]: { configuration: { webhookUrl: providerUrl } } } })

  const res = await fetch(installed.webhookUrl, { method: 'POST', headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ userId: 'u-1', conversationId: 'c-1', text: 'hello' }) })
  assert.equal(res.status, 200)
  const { message } = await res.json()
  assert.equal(message.payload.text, 'hello')
  assert.equal(message.direction, 'incoming')

  const deadline = Date.now() + 60_000
  while (!received.some((r) => r.body.text === 'echo: hello')) {
    if (Date.now() > deadline) {
      const { logs } = await client.getBotLogs({ id: bot.id, timeStart: '2020-01-01T00:00:00Z' })
      assert.fail(`the provider got no reply; it got ${JSON.stringify(received)}; the bot's logs:\n${logs.map((l) => `${l.level} ${l.message}`).join('\n')}`)
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  const reply = received.find((r) => r.body.text === 'echo: hello')
  assert.equal(reply.method, 'POST')
  assert.equal(reply.url, '/replies')

  // The bot sees the integration's tags under its alias; the integration's conversation is its own.
  const botClient = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId, botId: bot.id })
  const { conversation } = await botClient.getConversation({ id: reply.body.conversationId })
  assert.equal(conversation.integration, 'webhook-message')
  assert.equal(conversation.channel, 'webhook')
  assert.deepEqual(conversation.tags, { 'webhook-message:id': 'c-1' })
  assert.equal(reply.body.userId, bot.id) // the reply's author, as the template reads it
  const { users } = await botClient.listUsers({ tags: { 'webhook-message:id': 'u-1' } })
  assert.equal(users.length, 1)
  assert.equal(users[0].id, message.userId)

  // The same provider ids find the same conversation and user again.
  await fetch(installed.webhookUrl, { method: 'POST', body: JSON.stringify({ userId: 'u-1', conversationId: 'c-1', text: 'again' }) })
  while (!received.some((r) => r.body.text === 'echo: again')) {
    if (Date.now() > deadline) assert.fail('no reply to the second message')
    await new Promise((r) => setTimeout(r, 100))
  }
  const again = received.find((r) => r.body.text === 'echo: again')
  assert.equal(again.body.conversationId, reply.body.conversationId)
  const { messages } = await botClient.listMessages({ conversationId: reply.body.conversationId })
  assert.deepEqual(messages.map((m) => [m.direction, m.payload.text]).reverse(),
    [['incoming', 'hello'], ['outgoing', 'echo: hello'], ['incoming', 'again'], ['outgoing', 'echo: again']])
  assert.ok(messages.filter((m) => m.direction === 'incoming').every((m) => m.userId === message.userId))

  // A webhook the integration refuses gets its answer.
  const bad = await fetch(installed.webhookUrl, { method: 'POST', body: 'not json' })
  assert.equal(bad.status, 400)
  assert.deepEqual(await bad.json(), { error: 'Invalid JSON Body' })
})

test('bp dev of an integration: a bot that installs the dev integration reaches the code on the developer\'s machine down the tunnel', async () => {
  const dir = path.join(work, 'hello-world')
  const port = await new Promise((resolve) => {
    const l = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = l.address()
      l.close(() => resolve(port))
    })
  })
  const dev = startBp(bpBin, dir, home, ['dev', '--tunnelUrl', `${server.apiUrl}/v1/tunnels`, '--port', String(port), '-y'])
  try {
    const [, id] = await dev.wait(/Dev Integration deployed with id "([^"]+)"/)
    await dev.wait(/Listening on port/) // bp dev starts its worker after the deploy
    const { integration } = await client.getIntegration({ id })
    assert.equal(integration.dev, true)
    assert.ok(integration.url.startsWith(server.apiUrl + '/'), integration.url) // a tunnel of the server's
    const { bot } = await client.createBot({ name: 'dev-installer' })
    const { bot: updated } = await client.updateBot({ id: bot.id, integrations: { [id]: { enabled: true, configuration: {} } } })
    // The template's register throws, on the developer's machine too.
    assert.equal(updated.integrations[id].status, 'registration_failed')
    assert.equal(updated.integrations[id].statusReason, 'Invalid configuration')
    const botClient = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId, botId: bot.id })
    const res = await botClient.callAction({ type: 'hello-world:helloWorld', input: { name: 'Dev' } })
    assert.deepEqual(res.output, { message: 'Hello "Dev"! Nice to meet you ;)' })
  } finally {
    dev.stop()
  }
})

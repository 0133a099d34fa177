// An LLM provider's integration that a bot developer writes
// (integrations/llm-provider: it implements the llm interface of
// @botpress/sdk 0.10.10 and calls its provider's OpenAI-compatible API),
// deployed with `bp deploy` of @botpress/cli 0.8.59 and installed in a bot
// with its configuration; @botpress/cognitive 0.5.4, as the bot, finds its
// models and calls generateContent through callAction, which runs the
// integration's code (docs/llm.md). The provider is the stand-in model
// server on 127.0.0.2, a service outside that the integration's sandbox
// reaches through --bot-egress-ports (with --bot-fetch-private since it is
// loopback). The server has no model server of its own (no --ai-url).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Client } from '@botpress/client'
import { Cognitive } from '@botpress/cognitive'
import { PROMPT_TOKENS, COMPLETION_TOKENS, startModelServer } from '../support/model.js'
import { startServer } from '../support/server.js'
import { runBp } from '../support/bp.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const kit = path.resolve(import.meta.dirname, '..', 'integrations')
const bpBin = path.join(kit, 'node_modules/@botpress/cli/bin.js')

let provider, server, admin, home, work

const bp = (dir, args) => runBp(bpBin, dir, home, args)

before(async () => {
  provider = await startModelServer(undefined, { host: '127.0.0.2' })
  const port = new URL(provider.url).port
  server = await startServer({ args: ['--bot-egress-ports', port, '--bot-fetch-private'] })
  admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'bp-home-'))
  work = await fs.mkdtemp(path.join(kit, '.work-'))
  await bp(work, ['login', '--apiUrl', server.apiUrl, '--token', server.token, '--workspaceId', server.workspaceId, '-y'])
  await admin.updateWorkspace({ id: server.workspaceId, handle: 'acme' })
  // The hub's interfaces, as the operator stocks them (docs/integrations.md#interfaces).
  const script = path.resolve(import.meta.dirname, '..', '..', 'scripts', 'stock-hub', 'interfaces.mjs')
  await new Promise((resolve, reject) => execFile(process.execPath, [script, '--apiUrl', server.apiUrl, '--token', server.token, '--workspaceId', server.workspaceId],
    { cwd: kit }, (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stdout}${stderr}`)) : resolve())))
})

after(async () => {
  await server?.stop()
  await provider?.close()
  if (work) await fs.rm(work, { recursive: true, force: true })
  if (home) await fs.rm(home, { recursive: true, force: true })
})

test('a deployed llm integration answers @botpress/cognitive through callAction, from its provider', async () => {
  const dir = path.join(work, 'llm-provider')
  await fs.cp(path.resolve(import.meta.dirname, '..', 'integrations', 'llm-provider'), dir, { recursive: true })
  const out = await bp(dir, ['deploy', '-y'])
  assert.match(out, /Integration deployed/, out)
  const { integration } = await admin.getIntegrationByName({ name: 'acme/llm-provider', version: '0.1.0' })
  assert.deepEqual(Object.values(integration.interfaces).map((i) => i.name), ['llm'])
  assert.deepEqual(Object.keys(integration.actions).sort(), ['generateContent', 'listLanguageModels'])

  // Installed as a bot developer does for @botpress/cognitive 0.5.4: it
  // cannot read the bot's integrations with @botpress/client 1.45.0 (it
  // asks getBot for the client's botId, which that client does not have),
  // and then tries the names of the hosted platform's providers, groq among
  // them: the bot installs it under that alias (docs/llm.md).
  const { bot } = await admin.createBot({ name: 'provider user' })
  const { bot: installed } = await admin.updateBot({
    id: bot.id,
    integrations: { groq: { integrationId: integration.id, enabled: true, configuration: { baseUrl: provider.url, model: 'acme-large' } } },
  })
  assert.equal(installed.integrations[integration.id].status, 'registered', installed.integrations[integration.id].statusReason)
  assert.equal(installed.integrations[integration.id].name, 'acme/llm-provider')

  // As the bot's code calls it: with the bot's own API key.
  const key = await admin.createBotApiKey({ botId: bot.id, note: 'the bot' })
  const client = new Client({ apiUrl: server.apiUrl, token: key.value, botId: bot.id })
  const cognitive = new Cognitive({ client })
  const models = await cognitive.fetchInstalledModels()
  assert.deepEqual(models.map((m) => m.ref), ['groq:acme-large'])

  const { output } = await cognitive.generateContent({
    model: 'groq:acme-large',
    systemPrompt: 'Answer briefly.',
    messages: [{ role: 'user', content: 'where do walruses live?' }],
    stopSequences: ['\n\n'],
    temperature: 0.3,
  })
  assert.equal(output.choices[0].content, 'answer to where do walruses live?')
  assert.equal(output.choices[0].stopReason, 'stop')
  assert.equal(output.provider, 'llm-provider')
  assert.equal(output.usage.inputTokens, PROMPT_TOKENS)
  assert.equal(output.usage.outputTokens, COMPLETION_TOKENS)
  // What the provider received: the integration's request, built from the
  // interface's input that cognitive sent.
  const sent = provider.requests.at(-1)
  assert.equal(sent.model, 'acme-large')
  assert.deepEqual(sent.messages, [
    { role: 'system', content: 'Answer briefly.' },
    { role: 'user', content: 'where do walruses live?' },
  ])
  assert.deepEqual(sent.stop, ['\n\n'])
  assert.equal(sent.temperature, 0.3)

  // The integration's own log line reached the bot's logs.
  const { logs } = await admin.getBotLogs({ id: bot.id, timeStart: '2020-01-01T00:00:00Z' })
  assert.ok(logs.some((l) => l.message.includes('llm-provider: acme-large answered')), JSON.stringify(logs.map((l) => l.message)))

  // The provider failing is the action's failure, which cognitive reports.
  await admin.updateBot({ id: bot.id, integrations: { groq: { enabled: true, configuration: { baseUrl: provider.url + '/missing', model: 'acme-large' } } } })
  await assert.rejects(
    cognitive.generateContent({ model: 'groq:acme-large', messages: [{ role: 'user', content: 'hello?' }] }),
    (err) => err.type === 'Runtime' && /^action "groq:generateContent" failed: the provider answered 404/.test(err.message),
  )
})

test('installed by its id, as @botpress/cli 0.8.59 does, a deployed integration\'s actions are called by its bare name or by the name getBot shows', async () => {
  const { integration } = await admin.getIntegrationByName({ name: 'acme/llm-provider', version: '0.1.0' })
  const { bot } = await admin.createBot({ name: 'provider by id' })
  const { bot: installed } = await admin.updateBot({
    id: bot.id,
    integrations: { [integration.id]: { enabled: true, configuration: { baseUrl: provider.url, model: 'acme-small' } } },
  })
  const name = installed.integrations[integration.id].name
  assert.equal(name, 'acme/llm-provider')
  const key = await admin.createBotApiKey({ botId: bot.id, note: 'the bot' })
  const client = new Client({ apiUrl: server.apiUrl, token: key.value, botId: bot.id })
  for (const type of [`${name}:listLanguageModels`, 'llm-provider:listLanguageModels']) {
    const { output } = await client.callAction({ type, input: {} })
    assert.deepEqual(output.models.map((m) => m.id), ['acme-small'], type)
  }
  // Another workspace's handle is not this integration.
  await assert.rejects(client.callAction({ type: 'other/llm-provider:listLanguageModels', input: {} }), (err) => err.type === 'ResourceNotFound')
})

// A bot's LLM calls (docs/llm.md) through the official @botpress/cognitive
// 0.5.4 on @botpress/client 1.45.0, against a server whose --ai-url is a
// stand-in OpenAI-compatible model server (node:http on 127.0.0.1) that
// records what it receives and streams server-sent events when asked:
// - the llm interface: the bot installs the built-in LLM integration,
//   openai (updateBot), and Cognitive finds its models
//   (listLanguageModels), keeps its preferences in the bot's file by key,
//   and calls generateContent through callAction;
// - /v2/cognitive: its beta path (Cognitive with __experimental_beta) and
//   its v2 client (CognitiveBeta: generateText, generateTextStream,
//   listModels).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client } from '@botpress/client'
import { Cognitive, CognitiveBeta } from '@botpress/cognitive'
import { COMPLETION_TOKENS, PROMPT_TOKENS, startModelServer } from '../support/model.js'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const BIG = 'big-model'
const SMALL = 'small-model'

let model
let server
let admin
let client
let botId

before(async () => {
  model = await startModelServer()
  server = await startServer({
    args: ['--ai-url', model.url, '--ai-model', SMALL, '--ai-model-accurate', BIG, '--ai-prices', JSON.stringify({ [BIG]: { input: 3, output: 15 } })],
  })
  admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  ;({ bot: { id: botId } } = await admin.createBot({ name: 'thinking bot' }))
  client = new Client({ apiUrl: server.apiUrl, token: server.token, botId })
})

after(async () => {
  await server?.stop()
  await model?.close()
})

test('cognitive 0.5.4 calls the installed openai integration (the built-in LLM integration) through callAction', async () => {
  const { integration } = await admin.getPublicIntegration({ name: 'openai', version: '13.0.0' })
  assert.ok(integration.interfaces.llm, 'the hub\'s openai implements the llm interface')
  const { bot: installed } = await admin.updateBot({ id: botId, integrations: { openai: { integrationId: integration.id, enabled: true } } })
  assert.equal(installed.integrations[integration.id].status, 'registered') // keyed by id, as the client asks by default
  assert.equal(installed.integrations[integration.id].name, 'openai')

  const cognitive = new Cognitive({ client })
  const models = await cognitive.fetchInstalledModels()
  assert.deepEqual(models.map((m) => m.ref).sort(), [`openai:${BIG}`, `openai:${SMALL}`])

  const before = model.requests.length
  const { output, meta } = await cognitive.generateContent({
    model: 'best',
    systemPrompt: 'Answer briefly.',
    messages: [{ role: 'user', content: 'where do walruses live?' }],
    temperature: 0.2,
  })
  assert.equal(output.choices[0].content, 'answer to where do walruses live?')
  assert.equal(output.choices[0].stopReason, 'stop')
  assert.equal(meta.cached, false)
  assert.equal(model.requests.length, before + 1)
  const sent = model.requests.at(-1)
  assert.ok([BIG, SMALL].includes(sent.model), sent.model)
  assert.equal(sent.model, output.model)
  assert.deepEqual(sent.messages, [
    { role: 'system', content: 'Answer briefly.' },
    { role: 'user', content: 'where do walruses live?' },
  ])

  // Its model preferences are in a file of the bot, which it reads by key
  // (its key names the client's botId, a property @botpress/client 1.45.0
  // does not have: "undefined").
  const { files } = await client.listFiles({ tags: { purpose: 'config', system: 'true' } })
  assert.equal(files.length, 1)
  assert.match(files[0].key, /^bot->.*->models\.config\.json$/)
  const { file } = await client.getFile({ id: files[0].key })
  assert.equal(file.id, files[0].id)

  // Uninstalled (null, as bp deploy sends for an integration a bot no
  // longer declares), its actions are gone.
  await admin.updateBot({ id: botId, integrations: { openai: null } })
  await assert.rejects(client.callAction({ type: 'openai:listLanguageModels', input: {} }), (err) => err.type === 'ResourceNotFound')
})

test('cognitive 0.5.4 with its beta flag answers generateContent through /v2/cognitive', async () => {
  const cognitive = new Cognitive({ client, __experimental_beta: true })
  const before = model.requests.length
  const { output, meta } = await cognitive.generateContent({
    model: 'best',
    systemPrompt: 'Answer briefly.',
    messages: [{ role: 'user', content: 'what is a walrus?' }],
    temperature: 0.1,
    maxTokens: 100,
  })
  assert.equal(output.choices[0].content, 'answer to what is a walrus?')
  assert.equal(output.model, BIG)
  assert.equal(output.usage.inputTokens, PROMPT_TOKENS)
  assert.equal(output.usage.outputTokens, COMPLETION_TOKENS)
  const cost = (PROMPT_TOKENS * 3 + COMPLETION_TOKENS * 15) / 1e6
  assert.ok(Math.abs(output.botpress.cost - cost) < 1e-9, `cost ${output.botpress.cost}, want ${cost}`)
  assert.equal(meta.cached, false)
  assert.equal(model.requests.length, before + 1)
  const sent = model.requests.at(-1)
  assert.equal(sent.model, BIG)
  assert.deepEqual(sent.messages, [
    { role: 'system', content: 'Answer briefly.' },
    { role: 'user', content: 'what is a walrus?' },
  ])
  assert.equal(sent.temperature, 0.1)
  assert.equal(sent.max_tokens, 100)
})

test('CognitiveBeta: generateText, a stream read as it comes, and the models', async () => {
  const beta = new CognitiveBeta({ apiUrl: server.apiUrl, token: server.token, botId })
  const text = await beta.generateText({ model: 'fast', messages: [{ role: 'user', content: 'hello' }], stopSequences: ['\n\n'] })
  assert.equal(text.output, 'answer to hello')
  assert.equal(text.metadata.model, SMALL)
  assert.equal(text.metadata.stopReason, 'stop')
  assert.deepEqual(model.requests.at(-1).stop, ['\n\n'])

  const pieces = []
  let last
  for await (const chunk of beta.generateTextStream({ model: 'auto', messages: [{ role: 'user', content: 'one two three' }] })) {
    if (chunk.finished) last = chunk
    else pieces.push(chunk.output)
  }
  assert.deepEqual(pieces, ['answer ', 'to ', 'one ', 'two ', 'three'])
  assert.equal(last.metadata.model, SMALL)
  assert.equal(last.metadata.usage.outputTokens, COMPLETION_TOKENS)
  assert.equal(model.requests.at(-1).stream, true)

  const models = await beta.listModels()
  assert.deepEqual(models.map((m) => [m.id, m.aliases]), [[BIG, ['best']], [SMALL, ['auto', 'fast']]])
  assert.equal(models[0].input.costPer1MTokens, 3)
})

test('a call without credentials is refused', async () => {
  const beta = new CognitiveBeta({ apiUrl: server.apiUrl, botId })
  await assert.rejects(beta.generateText({ messages: [{ role: 'user', content: 'hi' }] }), (err) => err.response?.status === 401)
})

test('several model servers and the model map: each id goes to the model and the server the operator chose', async () => {
  const gpu = await startModelServer((body) => `gpu says ${body.model}`)
  const second = await startServer({
    args: ['--ai-url', model.url, '--ai-model', SMALL, '--ai-model-accurate', 'qwen:32b@gpu', '--ai-servers', `gpu=${gpu.url}`,
      '--ai-model-map', JSON.stringify({ 'openai:gpt-4o': 'qwen:32b@gpu', 'openai:gpt-4o-mini': SMALL }),
      '--ai-prices', JSON.stringify({ 'qwen:32b@gpu': { input: 1, output: 2 } })],
    env: { BOTPLATFORM_AI_KEY_GPU: 'gpu-secret' },
  })
  try {
    const a = new Client({ apiUrl: second.apiUrl, token: second.token, workspaceId: second.workspaceId })
    const { bot } = await a.createBot({ name: 'mapped' })
    const beta = new CognitiveBeta({ apiUrl: second.apiUrl, token: second.token, botId: bot.id })
    const before = { main: model.requests.length }

    for (const id of ['best', 'openai:gpt-4o']) {
      const ans = await beta.generateText({ model: id, messages: [{ role: 'user', content: 'hi' }] })
      assert.equal(ans.output, 'gpu says qwen:32b', id)
      assert.equal(ans.metadata.model, 'qwen:32b@gpu', id)
      assert.deepEqual(ans.metadata.warnings ?? [], [], id)
      assert.equal(ans.metadata.cost, (1 * PROMPT_TOKENS + 2 * COMPLETION_TOKENS) / 1e6, id)
    }
    const small = await beta.generateText({ model: 'openai:gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] })
    assert.equal(small.metadata.model, SMALL)
    assert.equal(small.output, 'answer to hi')

    // The gpu server got its own model name and key; the main one the rest.
    assert.equal(gpu.requests.length, 2)
    assert.deepEqual(gpu.requests.map((r) => r.model), ['qwen:32b', 'qwen:32b'])
    assert.deepEqual(model.requests.slice(before.main).map((r) => r.model), [SMALL])

    const models = await beta.listModels()
    assert.deepEqual(models.map((m) => [m.id, m.aliases]), [['qwen:32b@gpu', ['best', 'openai:gpt-4o']], [SMALL, ['auto', 'fast', 'openai:gpt-4o-mini']]])
  } finally {
    await second.stop()
    await gpu.close()
  }
})

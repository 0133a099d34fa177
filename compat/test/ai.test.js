// AI-assisted indexing compatibility: drives the server through the official
// @botpress/client 1.45.0 with a fake OpenAI-compatible model server
// (node:http on 127.0.0.1) behind --ai-url: the plan check of the Team
// options (402 PaymentRequired on community), summarization, agent parsing
// and vision.indexPages end to end (what the model was sent, the passages its
// answers became), AI Spend read with getUsage, getWorkspaceQuota,
// listWorkspaceUsages and breakDownWorkspaceUsageByBot, the spending limit
// (403 QuotaExceeded), and agent parsing refused without a model server
// (docs/indexing.md "AI-assisted options", docs/admin-api.md "Plans" and
// "AI Spend"). Plain fetches only where the client has no way: setting the
// plan (its updateWorkspace drops `plan`) and downloading a page image's
// sourceUrl.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import http from 'node:http'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, isApiError, InvalidPayloadError, InvalidQueryError, PaymentRequiredError, QuotaExceededError } from '@botpress/client'
import { startServer } from '../support/server.js'
import { adminFetch as rawAdminFetch } from '../support/admin.js'

// The client falls back to BP_* variables; a stray one must not change what
// a test sends.
for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

// The parsers' test data; the PDF fixtures are the PDF package's.
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'internal', 'indexing')
const fixture = (name) => fs.readFileSync(path.join(FIXTURES, name.endsWith('.pdf') ? 'pdf' : 'parse', 'testdata', name))

const MODEL = 'fake-1'
// 100 prompt tokens and 10 completion tokens at $1000 per million each.
const CALL_COST = (100 + 10) * 1000 / 1e6 // 0.11 USD
const INDEX_TIMEOUT_MS = 20_000

const SUMMARY = 'Walrus colonies summary.'
const DESCRIPTION = 'A chart of walrus counts.'
const RESTRUCTURED = '# Restructured\n\nThe narwhal paragraph.'

// A Markdown document with one heading and a section over the default
// minimumInputLength (1,000 characters): one summarization call.
const WALRUS_MD =
  '# Walrus colonies\n\n' +
  Array.from({ length: 12 }, (_, i) => `Paragraph ${i}: walruses haul out on sea ice and beaches in large, noisy colonies every summer.`).join('\n\n') +
  '\n'
const SUMMARIZE = { configuration: { summarization: { enable: true } } }

// ------------------------------------------------------ fake model server

/**
 * An OpenAI-compatible chat completions server: records every request body
 * and answers by the system message, always with the same token usage.
 */
async function startFakeModel() {
  const requests = [] // bodies of POST /v1/chat/completions
  const unexpected = [] // anything else: `${method} ${url}`
  const srv = http.createServer((req, res) => {
    const chunks = []
    req.on('data', (c) => chunks.push(c))
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        unexpected.push(`${req.method} ${req.url}`)
        res.writeHead(404, { 'Content-Type': 'application/json' })
        res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }))
        return
      }
      let body
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'))
      } catch (err) {
        unexpected.push(`bad JSON: ${err.message}`)
        res.writeHead(400, { 'Content-Type': 'application/json' })
        res.end(JSON.stringify({ error: { message: 'bad JSON' } }))
        return
      }
      requests.push(body)
      const system = body.messages?.find((m) => m.role === 'system')?.content ?? ''
      let answer = RESTRUCTURED // agent parsing, and anything else
      if (system.startsWith('You summarize')) answer = SUMMARY
      else if (system.startsWith('You describe')) answer = DESCRIPTION
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end(
        JSON.stringify({
          id: `chatcmpl-${requests.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
        })
      )
    })
  })
  await new Promise((resolve, reject) => {
    srv.once('error', reject)
    srv.listen(0, '127.0.0.1', resolve)
  })
  const { port } = srv.address()
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    unexpected,
    close: () =>
      new Promise((resolve) => {
        srv.close(resolve)
        srv.closeAllConnections()
      }),
  }
}

/** The system message of a recorded request. */
const systemOf = (r) => r.messages.find((m) => m.role === 'system')?.content ?? ''
/** The user message's content parts (a string content is one text part). */
function userParts(r) {
  const c = r.messages.find((m) => m.role === 'user')?.content
  return typeof c === 'string' ? [{ type: 'text', text: c }] : c ?? []
}
const userText = (r) => userParts(r).filter((p) => p.type === 'text').map((p) => p.text).join('\n')

// ------------------------------------------------------------------ setup

let fake
let server
let admin // owner of the bootstrap workspace (x-workspace-id)
let client // Files client of the bot (x-bot-id)
let botId

before(async () => {
  fake = await startFakeModel()
  server = await startServer({
    args: ['--ai-url', fake.url + '/v1', '--ai-model', MODEL, '--ai-prices', JSON.stringify({ [MODEL]: { input: 1000, output: 1000 } })],
  })
  admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  const { bot } = await admin.createBot({ name: 'ai compat bot' })
  botId = bot.id
  client = new Client({ apiUrl: server.apiUrl, token: server.token, botId })
})

after(async () => {
  await server?.stop()
  await fake?.close()
})

// ---------------------------------------------------------------- helpers

let counter = 0
const unique = (prefix) => `${prefix}-${Date.now().toString(36)}-${counter++}`

/** A raw admin request (support/admin.js) for what the client cannot send. */
const adminFetch = (path, opts) => rawAdminFetch(server, path, opts)

/** Polls getFile until the file's indexing ended; returns the file. */
async function waitIndexed(c, id) {
  const deadline = Date.now() + INDEX_TIMEOUT_MS
  for (;;) {
    const { file } = await c.getFile({ id })
    if (file.status === 'indexing_completed' || file.status === 'indexing_failed') return file
    assert.equal(file.status, 'indexing_pending', `file ${file.key} is ${file.status} while waiting for its indexing`)
    assert.ok(Date.now() < deadline, `file ${file.key} still ${file.status} after ${INDEX_TIMEOUT_MS} ms`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

async function mustIndex(props, c = client) {
  const { file } = await c.uploadFile({ index: true, ...props })
  const done = await waitIndexed(c, file.id)
  assert.equal(done.status, 'indexing_completed', `${props.key}: ${done.status} (${done.failedStatusReason})`)
  return done
}

/** Runs fn, which must throw an API error; returns it. */
async function apiError(fn, what) {
  let err
  try {
    await fn()
  } catch (e) {
    err = e
  }
  assert.ok(err, `${what}: no error`)
  assert.ok(isApiError(err), `${what}: not an API error: ${err.stack}`)
  return err
}

/** A refused upsert leaves no file behind. */
async function assertNoFile(key) {
  const files = await client.list.files({}).collect()
  assert.ok(!files.some((f) => f.key === key), `a refused upload left ${key} behind`)
}

const passagesOf = async (id) => client.list.filePassages({ id }).collect()
const approx = (got, want, what) => assert.ok(Math.abs(got - want) <= 1e-9, `${what}: ${got}, want ${want}`)

// ------------------------------------------------------------------ tests

test('community plan: uploadFile with summarization.enable is 402 PaymentRequired', async () => {
  const workspace = await admin.getWorkspace({ id: server.workspaceId })
  assert.equal(workspace.plan, 'community', 'a bootstrap workspace starts on the community plan')
  const before = fake.requests.length
  const key = unique('w') + '.md'
  const err = await apiError(
    () => client.uploadFile({ key, content: WALRUS_MD, index: true, indexing: SUMMARIZE }),
    'summarization on community'
  )
  assert.ok(err instanceof PaymentRequiredError, `want PaymentRequiredError, got ${err.constructor.name}: ${err.message}`)
  assert.equal(err.type, 'PaymentRequired')
  assert.equal(err.code, 402)
  assert.match(err.message, /summarization\.enable/, `message ${JSON.stringify(err.message)} names the option`)
  assert.equal(fake.requests.length, before, 'no model call for a refused upload')
  await assertNoFile(key)
})

test('team plan: summarization writes a summary passage from the model', async () => {
  const { res, text } = await adminFetch(`/v1/admin/workspaces/${encodeURIComponent(server.workspaceId)}`, {
    method: 'PUT',
    body: { plan: 'team' },
  })
  assert.ok(res.ok, `PUT plan team answered ${res.status}: ${text}`)
  const workspace = await admin.getWorkspace({ id: server.workspaceId })
  assert.equal(workspace.plan, 'team', 'getWorkspace shows the new plan')

  const before = fake.requests.length
  const file = await mustIndex({ key: 'w.md', content: WALRUS_MD, indexing: SUMMARIZE })
  const calls = fake.requests.slice(before)
  assert.equal(calls.length, 1, `one section over 1,000 characters, one summarization call; got ${calls.map(systemOf).join(' | ')}`)
  assert.equal(calls[0].model, MODEL)
  assert.ok(systemOf(calls[0]).startsWith('You summarize'), `system message ${JSON.stringify(systemOf(calls[0]))}`)
  assert.equal(calls[0].max_tokens, 1000, 'outputTokenLimit (default 1,000) is sent as max_tokens')
  assert.ok(userText(calls[0]).includes('walruses haul out on sea ice'), 'the section text is sent to the model')

  const { passages } = await client.searchFiles({ query: 'walrus colonies summary' })
  const hit = passages.find((p) => p.meta.type === 'summary')
  assert.ok(hit, `no summary passage found: ${JSON.stringify(passages.map((p) => [p.meta.type, p.content.slice(0, 40)]))}`)
  assert.equal(hit.content, SUMMARY)
  assert.equal(hit.file.id, file.id)

  const all = await passagesOf(file.id)
  const summaries = all.filter((p) => p.meta.type === 'summary')
  assert.deepEqual(summaries.map((p) => p.content), [SUMMARY], 'listFilePassages has the summary')
  assert.ok(all.some((p) => p.meta.type === 'chunk' && p.content.includes('walruses haul out')), 'the text is indexed too')
})

test('parsing.mode agent: the model restructures the text, its Markdown is what is indexed', async () => {
  const before = fake.requests.length
  const raw = 'narwhal notes\nthe narwhal has one long tusk\nit lives in arctic waters\n'
  const file = await mustIndex({ key: 'raw.txt', content: raw, indexing: { configuration: { parsing: { mode: 'agent' } } } })
  const calls = fake.requests.slice(before)
  assert.equal(calls.length, 1, `a small text is one agent parsing call; got ${calls.length}`)
  assert.equal(calls[0].model, MODEL, 'the balanced model (--ai-model)')
  assert.ok(systemOf(calls[0]).startsWith('You restructure'), `system message ${JSON.stringify(systemOf(calls[0]))}`)
  assert.ok(userText(calls[0]).includes('the narwhal has one long tusk'), 'the extracted text is sent to the model')

  const all = await passagesOf(file.id)
  assert.deepEqual(all.map((p) => p.content), ['Restructured', 'The narwhal paragraph.'], 'the passages of the model answer, in order')
  assert.deepEqual(all.map((p) => p.meta.subtype), ['title', 'paragraph'])
  assert.ok(!all.some((p) => p.content.includes('tusk')), 'the original text is not indexed')
})

test('vision.indexPages: a PDF page indexed as an image described by the model', async () => {
  const key = unique('report') + '.pdf'
  const before = fake.requests.length
  const file = await mustIndex({ key, content: fixture('handmade.pdf'), indexing: { configuration: { vision: { indexPages: [1] } } } })
  assert.equal(file.contentType, 'application/pdf')

  const calls = fake.requests.slice(before).filter((r) => userText(r).includes(key))
  assert.equal(calls.length, 1, `one page, one vision call for ${key}; got ${calls.length}`)
  assert.ok(systemOf(calls[0]).startsWith('You describe'), `system message ${JSON.stringify(systemOf(calls[0]))}`)
  assert.equal(calls[0].model, MODEL, 'the accurate model (--ai-model)')
  const images = userParts(calls[0]).filter((p) => p.type === 'image_url')
  assert.equal(images.length, 1, 'exactly one image content part')
  const m = /^data:(image\/(?:png|jpeg));base64,(.+)$/s.exec(images[0].image_url?.url ?? '')
  assert.ok(m, `image_url.url is a PNG or JPEG data URL: ${String(images[0].image_url?.url).slice(0, 60)}`)
  const sent = Buffer.from(m[2], 'base64')

  const all = await passagesOf(file.id)
  const img = all.filter((p) => p.meta.type === 'image')
  assert.equal(img.length, 1, `one image passage: ${JSON.stringify(all.map((p) => p.meta))}`)
  assert.equal(img[0].content, DESCRIPTION)
  assert.equal(img[0].meta.subtype, 'page')
  assert.equal(img[0].meta.pageNumber, 1)
  assert.equal(typeof img[0].meta.sourceUrl, 'string', 'meta.sourceUrl')
  assert.ok(all.some((p) => p.meta.type === 'chunk' && p.meta.pageNumber === 2), 'the pages are still indexed as text')

  const res = await fetch(img[0].meta.sourceUrl)
  assert.equal(res.status, 200, `GET sourceUrl answered ${res.status}`)
  const type = res.headers.get('content-type')
  assert.ok(type === 'image/png' || type === 'image/jpeg', `sourceUrl content-type ${type}`)
  const bytes = Buffer.from(await res.arrayBuffer())
  const sig = type === 'image/png' ? Buffer.from('89504e470d0a1a0a', 'hex') : Buffer.from('ffd8ff', 'hex')
  assert.ok(bytes.subarray(0, sig.length).equals(sig), `the image starts with the ${type} signature: ${bytes.subarray(0, 8).toString('hex')}`)
  assert.equal(m[1], type, 'the model saw the same image type')
  assert.ok(bytes.equals(sent), 'sourceUrl serves the image the model saw')
})

test('AI Spend: getUsage and breakDownWorkspaceUsageByBot count every model call', async () => {
  assert.deepEqual(fake.unexpected, [], 'the fake model server got only chat completions')
  const calls = fake.requests.length
  assert.ok(calls >= 3, `the tests above made model calls: ${calls}`)
  const want = calls * CALL_COST

  const { usage } = await admin.getUsage({ type: 'ai_spend', id: server.workspaceId })
  assert.equal(usage.id, server.workspaceId)
  assert.equal(usage.type, 'ai_spend')
  assert.match(usage.period, /^\d{4}-\d{2}$/)
  approx(usage.value, want, `workspace ai_spend for ${calls} calls`)
  assert.equal(usage.quota, 100, 'quota is the default spending limit')

  const { usage: botUsage } = await admin.getUsage({ type: 'ai_spend', id: botId })
  assert.equal(botUsage.id, botId)
  approx(botUsage.value, want, 'bot ai_spend (every call was for this bot)')
  assert.equal(botUsage.quota, 100, "a bot's quota is its workspace's spending limit")

  const { quota } = await admin.getWorkspaceQuota({ id: server.workspaceId, type: 'ai_spend' })
  assert.equal(quota.value, 100, 'getWorkspaceQuota: the spending limit')

  const { usages } = await admin.listWorkspaceUsages({ id: server.workspaceId, type: 'ai_spend' })
  assert.equal(usages.length, 1)
  approx(usages[0].value, want, 'listWorkspaceUsages')
  const { data } = await admin.breakDownWorkspaceUsageByBot({ id: server.workspaceId, type: 'ai_spend' })
  assert.equal(data.length, 1, `one bot: ${JSON.stringify(data)}`)
  assert.equal(data[0].botId, botId)
  approx(data[0].value, want, 'by-bot')
})

test('AI Spend by day: listUsageActivityDaily adds up to getUsage, today, by bot and purpose', async () => {
  const { usage } = await admin.getUsage({ type: 'ai_spend', id: server.workspaceId })
  const { data, meta } = await admin.listUsageActivityDaily({ id: server.workspaceId, type: 'ai_spend' })
  assert.ok(data.length >= 1, `some daily activity: ${JSON.stringify(data)}`)
  assert.equal(meta.nextToken, undefined)
  const today = new Date().toISOString().slice(0, 10)
  for (const d of data) {
    assert.equal(d.date, today, `every call was made today: ${JSON.stringify(d)}`)
    assert.equal(d.metadata.botId, botId)
    assert.equal(d.metadata.type, 'FileIndexing')
    assert.ok(['summarization', 'agent_parsing', 'vision_indexing', 'vision_transcription', 'smart_cleanup'].includes(d.metadata.subtype), d.metadata.subtype)
    assert.equal(d.key, `${d.date}/${d.metadata.botId}/${d.metadata.subtype}`)
  }
  approx(data.reduce((sum, d) => sum + d.value, 0), usage.value, 'the days add up to the month')
  assert.deepEqual(new Set(data.map((d) => d.key)).size, data.length, 'one item per day, bot and purpose')

  // The client's collection pages through it (one item a page).
  const all = []
  for await (const d of admin.list.usageActivityDaily({ id: botId, type: 'ai_spend', dateFrom: today, dateUntil: today, pageSize: 1 })) all.push(d)
  assert.deepEqual(all.map((d) => d.key), data.map((d) => d.key), 'the bot\'s days, a page at a time')

  const err = await apiError(() => admin.listUsageActivityDaily({ id: server.workspaceId, type: 'ai_spend', dateFrom: 'yesterday' }), 'a bad dateFrom')
  assert.ok(err instanceof InvalidQueryError, `want InvalidQueryError, got ${err.constructor.name}`)
  assert.match(err.message, /dateFrom/)
})

test('spendingLimit 0: an upload that would call the model is 403 QuotaExceeded', async () => {
  const updated = await admin.updateWorkspace({ id: server.workspaceId, spendingLimit: 0 })
  assert.equal(updated.spendingLimit, 0, `updateWorkspace answered ${JSON.stringify(updated)}`)
  const got = await admin.getWorkspace({ id: server.workspaceId })
  assert.equal(got.spendingLimit, 0, 'the client sends spendingLimit and the server keeps it')

  const before = fake.requests.length
  const key = unique('over') + '.md'
  const err = await apiError(
    () => client.uploadFile({ key, content: WALRUS_MD, index: true, indexing: SUMMARIZE }),
    'summarization over the spending limit'
  )
  assert.ok(err instanceof QuotaExceededError, `want QuotaExceededError, got ${err.constructor.name}: ${err.message}`)
  assert.equal(err.type, 'QuotaExceeded')
  assert.equal(err.code, 403)
  assert.match(err.message, /AI Spend/, `message ${JSON.stringify(err.message)} names AI Spend`)
  assert.equal(fake.requests.length, before, 'no model call once the limit is reached')
  await assertNoFile(key)
  // Without AI options the same upload is still accepted.
  await mustIndex({ key: unique('plain') + '.md', content: WALRUS_MD })
})

test('without --ai-url: parsing.mode agent is 400 InvalidPayload naming parsing.mode and --ai-url', async () => {
  const plain = await startServer()
  try {
    const wsAdmin = new Client({ apiUrl: plain.apiUrl, token: plain.token, workspaceId: plain.workspaceId })
    const { bot } = await wsAdmin.createBot({ name: 'no model bot' })
    const files = new Client({ apiUrl: plain.apiUrl, token: plain.token, botId: bot.id })
    const err = await apiError(
      () => files.uploadFile({ key: 'raw.txt', content: 'narwhal notes\n', index: true, indexing: { configuration: { parsing: { mode: 'agent' } } } }),
      'agent parsing without a model server'
    )
    assert.ok(err instanceof InvalidPayloadError, `want InvalidPayloadError, got ${err.constructor.name}: ${err.message}`)
    assert.equal(err.type, 'InvalidPayload')
    assert.equal(err.code, 400)
    assert.match(err.message, /parsing\.mode/, `message ${JSON.stringify(err.message)} names the option`)
    assert.match(err.message, /--ai-url/, `message ${JSON.stringify(err.message)} names the setting`)
    // Standard parsing still works there.
    await mustIndex({ key: 'plain.txt', content: 'narwhal notes\n' }, files)
  } finally {
    await plain.stop()
  }
})

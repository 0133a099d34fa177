// Indexing and search compatibility: drives the server through the official
// @botpress/client 1.45.0 — uploadFile with index: true for every supported
// format, getFile until the indexing ends, searchFiles (its response shape and
// the client's own encoding of `tags`), listFilePassages (and
// list.filePassages), setFilePassages (compat-notes §2.2).

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client, isApiError, InvalidPayloadError, InvalidQueryError } from '@botpress/client'
import { startServer } from '../support/server.js'

// The client falls back to BP_* variables; a stray one must not change what
// a test sends.
for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

// The parsers' test data; the PDF fixtures are the PDF package's.
const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'internal', 'indexing')
const fixture = (name) => fs.readFileSync(path.join(FIXTURES, name.endsWith('.pdf') ? 'pdf' : 'parse', 'testdata', name))

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
const SUPPORTED = ['text/plain', 'text/markdown', 'text/html', 'application/pdf', DOCX, 'text/csv', 'application/json']
const PASSAGE_TYPES = ['chunk', 'summary', 'consolidated', 'image']
const SUBTYPES = ['title', 'subtitle', 'paragraph', 'blockquote', 'list', 'table', 'code', 'image', 'page']
const CONTEXT_TYPES = ['preceding', 'subsequent', 'current', 'breadcrumb']
const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/
const INDEX_TIMEOUT_MS = 30_000

let server
let client // Files client of the bot (x-bot-id)

before(async () => {
  server = await startServer()
  const admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  const { bot } = await admin.createBot({ name: 'indexing compat bot' })
  client = new Client({ apiUrl: server.apiUrl, token: server.token, botId: bot.id })
})

after(async () => {
  await server?.stop()
})

// ---------------------------------------------------------------- helpers

let counter = 0
const unique = (prefix) => `${prefix}-${Date.now().toString(36)}-${counter++}`

/** Polls getFile until the file's indexing ended; returns the file. */
async function waitIndexed(id) {
  const deadline = Date.now() + INDEX_TIMEOUT_MS
  for (;;) {
    const { file } = await client.getFile({ id })
    if (file.status === 'indexing_completed' || file.status === 'indexing_failed') return file
    assert.equal(file.status, 'indexing_pending', `file ${file.key} is ${file.status} while waiting for its indexing`)
    assert.ok(Date.now() < deadline, `file ${file.key} still ${file.status} after ${INDEX_TIMEOUT_MS} ms`)
    await new Promise((r) => setTimeout(r, 25))
  }
}

async function mustIndex(props) {
  const { file } = await client.uploadFile({ index: true, ...props })
  const done = await waitIndexed(file.id)
  assert.equal(done.status, 'indexing_completed', `${props.key}: ${done.status} (${done.failedStatusReason})`)
  return done
}

function assertMeta(meta, what) {
  assert.ok(meta && typeof meta === 'object', `${what}.meta`)
  assert.ok(PASSAGE_TYPES.includes(meta.type), `${what}.meta.type ${meta.type}`)
  if (meta.subtype !== undefined) assert.ok(SUBTYPES.includes(meta.subtype), `${what}.meta.subtype ${meta.subtype}`)
  if (meta.pageNumber !== undefined) assert.ok(Number.isInteger(meta.pageNumber) && meta.pageNumber >= 1, `${what}.meta.pageNumber`)
  assert.ok(Number.isInteger(meta.position) && meta.position >= 0, `${what}.meta.position ${meta.position}`)
}

/** Checks a searchFiles response as SearchFilesResponse types it. */
function assertSearchResponse(res, what) {
  assert.deepEqual(Object.keys(res), ['passages'], `${what}: response keys`)
  assert.ok(Array.isArray(res.passages), `${what}: passages`)
  let prev = Infinity
  res.passages.forEach((p, i) => {
    const w = `${what}: passages[${i}]`
    assert.equal(typeof p.content, 'string', `${w}.content`)
    assert.ok(p.content.length > 0, `${w}.content is empty`)
    assert.equal(typeof p.score, 'number', `${w}.score`)
    assert.ok(Number.isFinite(p.score) && p.score <= prev, `${w}: score ${p.score} after ${prev} (best first)`)
    prev = p.score
    assertMeta(p.meta, w)
    assert.deepEqual(Object.keys(p.file).sort(), ['contentType', 'createdAt', 'id', 'key', 'metadata', 'tags', 'updatedAt'], `${w}.file keys`)
    for (const k of ['id', 'key', 'contentType']) assert.equal(typeof p.file[k], 'string', `${w}.file.${k}`)
    assert.ok(p.file.metadata && typeof p.file.metadata === 'object', `${w}.file.metadata`)
    assert.ok(p.file.tags && typeof p.file.tags === 'object', `${w}.file.tags`)
    assert.match(p.file.createdAt, ISO_RE, `${w}.file.createdAt`)
    assert.match(p.file.updatedAt, ISO_RE, `${w}.file.updatedAt`)
    if (p.context !== undefined) {
      assert.ok(Array.isArray(p.context), `${w}.context`)
      for (const c of p.context) {
        assert.equal(typeof c.text, 'string', `${w}.context.text`)
        assert.ok(CONTEXT_TYPES.includes(c.type), `${w}.context.type ${c.type}`)
      }
    }
  })
}

async function search(props, what = JSON.stringify(props)) {
  const res = await client.searchFiles(props)
  assertSearchResponse(res, what)
  return res.passages
}

const describeHits = (ps) => ps.map((p, i) => `\n  ${i}. ${p.file.key}@${p.meta.position} ${p.score.toFixed(5)} ${JSON.stringify(p.content.slice(0, 80))}`).join('')

// ---------------------------------------------------------------- tests

describe('indexing every supported format', () => {
  const cases = [
    { key: 'notes.txt', contentType: 'text/plain', content: 'Garden diary\n\nThe aardvark digs burrows under the fence every night.\n\nTomatoes ripened early.\n', query: 'aardvark burrows', want: 'The aardvark digs burrows under the fence every night.' },
    { key: 'birds.md', contentType: 'text/markdown', content: '# Birds\n\n## Kingfisher\n\nThe kingfisher has bright **turquoise** plumage.\n\n## Owls\n\nOwls hunt at night.\n', query: 'turquoise plumage', want: 'The kingfisher has bright turquoise plumage.' },
    { key: 'coast.html', contentType: 'text/html', content: '<html><head><script>var hidden = 1</script></head><body><h1>Coast</h1><p>The lighthouse keeper polishes the <b>lens</b>.</p><p>Gulls circle the harbour.</p></body></html>', query: 'lighthouse keeper lens', want: 'The lighthouse keeper polishes the lens.' },
    { key: 'animals.csv', contentType: 'text/csv', content: 'animal,habitat,diet\nquokka,Rottnest Island,leaves\nwombat,forest,grass\n', query: 'quokka Rottnest', want: 'Rottnest Island' },
    { key: 'service.json', contentType: 'application/json', content: JSON.stringify({ service: { name: 'narwhal tusk tracker', port: 8080 }, owner: 'marine lab' }), query: 'narwhal tusk', want: 'narwhal tusk tracker' },
    { key: 'report.pdf', content: fixture('handmade.pdf'), query: 'zebras stripes', want: 'zebras and their stripes', page: 2, expectType: 'application/pdf' },
    { key: 'handbook.docx', content: fixture('handmade.docx'), query: 'misbehaving bot', want: 'one misbehaving bot cannot slow the others down', expectType: DOCX },
  ]
  const files = {}

  before(async () => {
    // Upload everything first, so that the files are indexed side by side.
    for (const c of cases) {
      const { file } = await client.uploadFile({
        key: c.key,
        content: c.content,
        index: true,
        ...(c.contentType ? { contentType: c.contentType } : {}),
        tags: { suite: 'formats' },
      })
      assert.equal(file.index, true)
      files[c.key] = file
    }
  })

  for (const c of cases) {
    test(`${c.contentType ?? c.expectType} (${c.key}) is indexed and found`, async () => {
      const file = await waitIndexed(files[c.key].id)
      assert.equal(file.status, 'indexing_completed', `${c.key}: ${file.failedStatusReason}`)
      assert.equal(file.indexingStack, 'v2')
      assert.equal(file.contentType, c.contentType ?? c.expectType, 'content type (given, or from the key extension)')
      const hits = await search({ query: c.query, tags: { suite: 'formats' } })
      assert.ok(hits.length > 0, `no passage for ${c.query}`)
      assert.equal(hits[0].file.id, file.id, `first passage for ${JSON.stringify(c.query)}:${describeHits(hits)}`)
      assert.ok(hits[0].content.includes(c.want), `first passage ${JSON.stringify(hits[0].content)} lacks ${JSON.stringify(c.want)}`)
      assert.equal(hits[0].meta.type, 'chunk')
      assert.equal(hits[0].file.key, c.key)
      assert.equal(hits[0].file.contentType, file.contentType)
      assert.deepEqual(hits[0].file.tags, { suite: 'formats' })
      if (c.page) assert.equal(hits[0].meta.pageNumber, c.page, 'PDF passages carry their page')
      else assert.equal(hits[0].meta.pageNumber, undefined)
    })
  }
})

test('an unsupported file (PNG) ends indexing_failed with its reason', async () => {
  const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c63f80f00000101000518d84e0000000049454e44ae426082', 'hex')
  const { file } = await client.uploadFile({ key: unique('logo') + '.png', content: png, index: true })
  assert.equal(file.contentType, 'image/png')
  const done = await waitIndexed(file.id)
  assert.equal(done.status, 'indexing_failed')
  assert.equal(typeof done.failedStatusReason, 'string')
  for (const t of ['image/png', ...SUPPORTED]) {
    assert.ok(done.failedStatusReason.includes(t), `reason ${JSON.stringify(done.failedStatusReason)} does not name ${t}`)
  }
  const { passages } = await client.listFilePassages({ id: file.id })
  assert.deepEqual(passages, [])
  // A corrupt PDF fails with a readable reason too.
  const { file: pdf } = await client.uploadFile({ key: unique('broken') + '.pdf', content: '%PDF-1.7\ngarbage\n%%EOF\n', index: true })
  const failed = await waitIndexed(pdf.id)
  assert.equal(failed.status, 'indexing_failed')
  assert.match(failed.failedStatusReason, /PDF/)
})

test('searchFiles: options and the tags filter through the client', async () => {
  const suite = unique('search')
  const hr = await mustIndex({
    key: `${suite}/handbook.md`,
    content: '# Employee Handbook\n\n## Payroll\n\nSalaries are paid on the last business day.\n\nExpense reports are reimbursed with the next salary.\n\nTax forms are in the portal.\n',
    tags: { suite, dept: 'hr' },
    indexing: { configuration: { stack: 'legacy' } },
  })
  const fin = await mustIndex({ key: `${suite}/finance.md`, content: 'Expense claims need receipts.', tags: { suite, dept: 'finance' } })
  const ops = await mustIndex({ key: `${suite}/ops.md`, content: 'Expense cards come from operations.', tags: { suite, dept: 'ops' } })
  const filesOf = (ps) => [...new Set(ps.map((p) => p.file.id))].sort()

  // The client serializes `tags` itself (qs dot notation).
  assert.deepEqual(filesOf(await search({ query: 'expense', tags: { suite } })), [hr.id, fin.id, ops.id].sort())
  assert.deepEqual(filesOf(await search({ query: 'expense', tags: { suite, dept: 'finance' } })), [fin.id])
  assert.deepEqual(filesOf(await search({ query: 'expense', tags: { suite, dept: ['hr', 'ops'] } })), [hr.id, ops.id].sort())
  assert.deepEqual(filesOf(await search({ query: 'expense', tags: { suite, dept: { not: 'hr' } } })), [fin.id, ops.id].sort())
  assert.deepEqual(await search({ query: 'expense', tags: { suite, dept: 'nobody' } }), [])

  // The target passage first, with its context and breadcrumb when asked.
  const target = 'Expense reports are reimbursed with the next salary.'
  const [first] = await search({ query: 'expense reports reimbursed', tags: { suite, dept: 'hr' }, withContext: true, contextDepth: 1, includeBreadcrumb: true })
  assert.equal(first.content, target)
  assert.equal(first.meta.subtype, 'paragraph')
  const ctx = (type) => first.context.filter((c) => c.type === type).map((c) => c.text)
  assert.deepEqual(ctx('breadcrumb'), ['Employee Handbook > Payroll'])
  assert.deepEqual(ctx('preceding'), ['Salaries are paid on the last business day.'])
  assert.deepEqual(ctx('subsequent'), ['Tax forms are in the portal.'])
  const [bare] = await search({ query: 'expense reports reimbursed', tags: { suite, dept: 'hr' } })
  assert.equal(bare.content, target)
  assert.ok(bare.context === undefined || bare.context.length === 0, 'no context unless asked for')

  assert.equal((await search({ query: 'expense', tags: { suite }, limit: 2 })).length, 2)
  const cons = await search({ query: 'expense', tags: { suite }, consolidate: true })
  assert.equal(cons.length, new Set(cons.map((p) => p.file.id)).size, 'one passage per file')
  for (const p of cons) assert.equal(p.meta.type, 'consolidated')

  for (const bad of [{ query: 'expense', limit: 0 }, { query: 'expense', contextDepth: 11 }, { query: '' }]) {
    let err
    try {
      await client.searchFiles(bad)
    } catch (e) {
      err = e
    }
    assert.ok(isApiError(err) && err instanceof InvalidQueryError, `${JSON.stringify(bad)}: ${err?.stack ?? 'no error'}`)
  }
})

test('listFilePassages and setFilePassages through the client', async () => {
  const suite = unique('passages')
  const paras = Array.from({ length: 12 }, (_, i) => `Paragraph ${i} about herons and egrets.`)
  const file = await mustIndex({ key: `${suite}/long.md`, content: paras.join('\n\n'), tags: { suite }, indexing: { configuration: { stack: 'legacy' } } })

  // Pages, by id and by key.
  const first = await client.listFilePassages({ id: file.id, limit: 5 })
  assert.deepEqual(Object.keys(first).sort(), ['meta', 'passages'])
  assert.equal(first.passages.length, 5)
  assert.equal(typeof first.meta.nextToken, 'string')
  for (const p of first.passages) {
    assert.equal(typeof p.id, 'string')
    assertMeta(p.meta, 'listFilePassages')
  }
  const all = await client.list.filePassages({ id: file.id }).collect()
  assert.deepEqual(all.map((p) => p.content), paras)
  assert.deepEqual(all.map((p) => p.meta.position), paras.map((_, i) => i))
  const byKey = await client.list.filePassages({ id: file.key }).collect()
  assert.deepEqual(byKey, all)

  // Replace them.
  const res = await client.setFilePassages({
    id: file.id,
    passages: [
      { content: 'Flamingos', type: 'title' },
      { content: 'Flamingos stand on one leg in shallow lagoons.', pageNumber: 2 },
    ],
  })
  assert.deepEqual(res, {})
  const done = await waitIndexed(file.id)
  assert.equal(done.status, 'indexing_completed')
  const now = await client.list.filePassages({ id: file.id }).collect()
  assert.deepEqual(now.map((p) => [p.content, p.meta.subtype, p.meta.pageNumber]), [
    ['Flamingos', 'title', undefined],
    ['Flamingos stand on one leg in shallow lagoons.', 'paragraph', 2],
  ])
  const hits = await search({ query: 'shallow lagoons', tags: { suite } })
  assert.equal(hits[0].content, 'Flamingos stand on one leg in shallow lagoons.')
  assert.equal(hits[0].meta.pageNumber, 2)
  assert.ok(!hits.some((h) => h.content.includes('herons')), `old passages still found:${describeHits(hits)}`)

  // Bad bodies.
  let err
  try {
    await client.setFilePassages({ id: file.id, passages: [{ content: 'x', type: 'heading' }] })
  } catch (e) {
    err = e
  }
  assert.ok(isApiError(err) && err instanceof InvalidPayloadError, `unknown type: ${err?.stack ?? 'no error'}`)
  assert.match(err.message, /passages\.0\.type/)
})

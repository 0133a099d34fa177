// Files API compatibility: drives the server through the official
// @botpress/client 1.45.0 (uploadFile, getFile, listFiles, list.files,
// updateFileMetadata, copyFile, deleteFile, listFileTags, listFileTagValues,
// and the workspace quota operations), plus plain fetches only where the
// client has no operation: downloading `file.url`, a hand-made PUT to an
// `uploadUrl`, and setting quotas (compat-notes §0, §2.2, §3).

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import {
  Client,
  isApiError,
  AlreadyExistsError,
  ForbiddenError,
  InvalidPayloadError,
  ResourceNotFoundError,
  UnauthorizedError,
  UploadFileError,
} from '@botpress/client'
import { startServer } from '../support/server.js'
import { adminFetch as rawAdminFetch } from '../support/admin.js'

// The client falls back to BP_* variables; a stray one must not change what
// a test sends.
for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

let server
let admin // owner of the bootstrap workspace (x-workspace-id)
let botId
let client // Files client of botId (x-bot-id)

before(async () => {
  // No indexing workers: indexed files stay indexing_pending here
  // (test/indexing.test.js covers indexing).
  server = await startServer({ args: ['--index-workers', '0'] })
  admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  const { bot } = await admin.createBot({ name: 'files compat bot' })
  botId = bot.id
  client = new Client({ apiUrl: server.apiUrl, token: server.token, botId })
})

after(async () => {
  await server?.stop()
})

// ---------------------------------------------------------------- helpers

const ISO_RE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/
const ERROR_ID_RE = /^err_/
const STATUSES = ['upload_pending', 'upload_failed', 'upload_completed', 'indexing_pending', 'indexing_failed', 'indexing_completed']

let counter = 0
const unique = (prefix) => `${prefix}-${process.pid}-${Date.now().toString(36)}-${counter++}`

/** All 256 byte values, twice, in a scrambled order so offsets matter. */
const ALL_BYTES = (() => {
  const b = Buffer.alloc(512)
  for (let i = 0; i < 512; i++) b[i] = (i * 167 + 13) % 256
  return b
})()
assert.equal(new Set(ALL_BYTES).size, 256)

function assertIsoDate(value, what) {
  assert.equal(typeof value, 'string', `${what} must be a string, got ${JSON.stringify(value)}`)
  assert.match(value, ISO_RE, `${what} must be an ISO 8601 date-time`)
  assert.ok(!Number.isNaN(Date.parse(value)), `${what} must parse as a date`)
}

function assertPlainObject(value, what) {
  assert.ok(value !== null && typeof value === 'object' && !Array.isArray(value), `${what} must be an object, got ${JSON.stringify(value)}`)
}

/** Checks every field the client's File type requires (GetFileResponse['file']). */
function assertFileShape(f, what = 'file') {
  assertPlainObject(f, what)
  for (const k of ['id', 'botId', 'key', 'url', 'contentType']) assert.equal(typeof f[k], 'string', `${what}.${k}`)
  assert.ok(f.id.length > 0)
  assert.doesNotThrow(() => new URL(f.url), `${what}.url must be an absolute URL, got ${f.url}`)
  assert.ok(f.size === null || (Number.isInteger(f.size) && f.size >= 0), `${what}.size must be null or a byte count, got ${f.size}`)
  assertPlainObject(f.tags, `${what}.tags`)
  for (const [k, v] of Object.entries(f.tags)) assert.equal(typeof v, 'string', `${what}.tags.${k}`)
  assertPlainObject(f.metadata, `${what}.metadata`)
  assertIsoDate(f.createdAt, `${what}.createdAt`)
  assertIsoDate(f.updatedAt, `${what}.updatedAt`)
  assert.ok(Array.isArray(f.accessPolicies), `${what}.accessPolicies`)
  for (const p of f.accessPolicies) assert.ok(['integrations', 'public_content'].includes(p), `${what}.accessPolicies: ${p}`)
  assert.equal(typeof f.index, 'boolean', `${what}.index`)
  assert.ok(STATUSES.includes(f.status), `${what}.status: ${f.status}`)
  if (f.failedStatusReason !== undefined) assert.equal(typeof f.failedStatusReason, 'string', `${what}.failedStatusReason`)
  if (f.expiresAt !== undefined) assertIsoDate(f.expiresAt, `${what}.expiresAt`)
  assertPlainObject(f.owner, `${what}.owner`)
  assert.ok(['bot', 'integration', 'user'].includes(f.owner.type), `${what}.owner.type: ${f.owner.type}`)
  for (const k of ['id', 'name', 'alias']) {
    if (f.owner[k] !== undefined) assert.equal(typeof f.owner[k], 'string', `${what}.owner.${k}`)
  }
  if (f.indexingStack !== undefined) assert.ok(['v1', 'v2'].includes(f.indexingStack), `${what}.indexingStack`)
}

/** Same as admin.test.js: the promise must reject with that API error class. */
async function rejectsWith(promise, ErrorClass, type) {
  const want = `${type}Error`
  let err
  try {
    await promise
  } catch (e) {
    err = e
  }
  assert.ok(err, `expected ${want}, but the call succeeded`)
  assert.ok(isApiError(err), `expected an API error, got ${err?.stack ?? err}`)
  assert.ok(err instanceof ErrorClass, `expected ${want}, got type=${err.type} code=${err.code}: ${err.message}`)
  assert.equal(err.type, type)
  assert.match(err.id, ERROR_ID_RE, `error id ${err.id} must start with err_`)
  assert.notEqual(err.id, 'UNKNOWN', 'the server sent an empty error id')
  assert.equal(typeof err.message, 'string')
  assert.ok(err.message.length > 0, 'error message must not be empty')
  return err
}

/** Downloads a url with no credentials, as a browser or a bot would. */
async function download(url) {
  const res = await fetch(url)
  const bytes = Buffer.from(await res.arrayBuffer())
  return { res, bytes }
}

async function assertContent(url, expected, what) {
  const { res, bytes } = await download(url)
  assert.equal(res.status, 200, `${what}: GET ${url} answered ${res.status}: ${bytes.toString('utf8').slice(0, 300)}`)
  assert.equal(bytes.length, expected.length, `${what}: downloaded ${bytes.length} bytes, uploaded ${expected.length}`)
  assert.ok(bytes.equals(Buffer.from(expected)), `${what}: downloaded bytes differ from the uploaded ones`)
  return res
}

/** A raw admin request (support/admin.js) for what the client cannot send. */
const adminFetch = (path, opts) => rawAdminFetch(server, path, opts)

async function setQuotas(workspaceId, quotas) {
  const { res, text } = await adminFetch(`/v1/admin/workspaces/${encodeURIComponent(workspaceId)}/quotas`, {
    method: 'PUT',
    body: quotas,
    workspaceId,
  })
  assert.ok(res.ok, `PUT quotas ${JSON.stringify(quotas)} answered ${res.status}: ${text}`)
}

/** A fresh workspace with one bot, so quota and usage numbers are not shared with other tests. */
async function freshWorkspace(name) {
  const ws = await admin.createWorkspace({ name: unique(name) })
  const wsAdmin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: ws.id })
  const { bot } = await wsAdmin.createBot({ name: `${name} bot` })
  const files = new Client({ apiUrl: server.apiUrl, token: server.token, botId: bot.id })
  return { ws, wsAdmin, bot, files }
}

// --------------------------------------------------------------- uploadFile

describe('uploadFile', () => {
  test('a string: size is its UTF-8 length, contentType inferred from .txt, url serves the bytes', async () => {
    const key = unique('greeting') + '.txt'
    const content = 'héllo wörld ✓ — 👋'
    const utf8 = Buffer.from(content, 'utf8')
    assert.notEqual(utf8.length, content.length, 'the sample must have multi-byte characters')

    const { file: uploaded } = await client.uploadFile({ key, content })
    assertFileShape(uploaded, 'uploadFile file')
    assert.equal(uploaded.key, key)
    assert.equal(uploaded.botId, botId)
    assert.equal(uploaded.size, utf8.length)
    assert.equal(uploaded.contentType, 'text/plain')
    assert.equal(typeof uploaded.uploadUrl, 'string', 'upsertFile must return uploadUrl')

    const { file } = await client.getFile({ id: uploaded.id })
    assertFileShape(file)
    assert.equal(file.id, uploaded.id)
    assert.equal(file.key, key)
    assert.equal(file.botId, botId)
    assert.equal(file.status, 'upload_completed')
    assert.equal(file.size, utf8.length)
    assert.equal(file.contentType, 'text/plain')
    assert.equal(file.index, false)
    assert.deepEqual(file.tags, {})
    assert.deepEqual(file.accessPolicies, [])
    assert.equal(file.owner.type, 'bot')
    assert.equal(file.failedStatusReason, undefined)
    const res = await assertContent(file.url, utf8, 'string upload')
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/)
  })

  test('a Buffer with all 256 byte values comes back byte for byte (.bin → application/octet-stream)', async () => {
    const key = unique('bytes') + '.bin'
    const { file: uploaded } = await client.uploadFile({ key, content: ALL_BYTES })
    assert.equal(uploaded.size, ALL_BYTES.length)
    const { file } = await client.getFile({ id: uploaded.id })
    assertFileShape(file)
    assert.equal(file.status, 'upload_completed')
    assert.equal(file.size, ALL_BYTES.length)
    assert.equal(file.contentType, 'application/octet-stream')
    await assertContent(file.url, ALL_BYTES, 'Buffer upload')
  })

  test('a plain Uint8Array and an ArrayBuffer upload too; contentType from .png / .pdf', async () => {
    const u8 = new Uint8Array(ALL_BYTES) // a copy that is not a Buffer
    assert.ok(!Buffer.isBuffer(u8))
    const { file: a } = await client.uploadFile({ key: unique('image') + '.png', content: u8 })
    const got = (await client.getFile({ id: a.id })).file
    assert.equal(got.status, 'upload_completed')
    assert.equal(got.size, u8.byteLength)
    assert.equal(got.contentType, 'image/png')
    await assertContent(got.url, u8, 'Uint8Array upload')

    const ab = ALL_BYTES.buffer.slice(ALL_BYTES.byteOffset, ALL_BYTES.byteOffset + 256)
    const { file: b } = await client.uploadFile({ key: unique('doc') + '.PDF', content: ab })
    const gotB = (await client.getFile({ id: b.id })).file
    assert.equal(gotB.size, 256)
    assert.equal(gotB.contentType, 'application/pdf', 'the extension is matched case-insensitively')
    await assertContent(gotB.url, Buffer.from(ab), 'ArrayBuffer upload')
  })

  test('contentType inference for common extensions, and an explicit contentType wins', async () => {
    const cases = { '.md': 'text/markdown', '.json': 'application/json', '.csv': 'text/csv', '.html': 'text/html', '': 'application/octet-stream' }
    for (const [ext, type] of Object.entries(cases)) {
      const { file } = await client.uploadFile({ key: unique('infer') + ext, content: 'x' })
      assert.equal(file.contentType, type, `key ending in "${ext}"`)
      assert.equal((await client.getFile({ id: file.id })).file.contentType, type)
    }
    const { file } = await client.uploadFile({ key: unique('explicit') + '.txt', content: '{}', contentType: 'application/json' })
    const { file: got } = await client.getFile({ id: file.id })
    assert.equal(got.contentType, 'application/json')
    const res = await assertContent(got.url, Buffer.from('{}'), 'explicit content type')
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/)
  })

  test('tags and metadata are stored; index false → upload_completed, index true → indexing_pending', async () => {
    const tags = { team: 'red', 'with space': 'a b+c:d/é' }
    const metadata = { n: 1, nested: { ok: true, list: [1, 'two'] }, s: 'x' }
    const { file: plain } = await client.uploadFile({ key: unique('tagged') + '.txt', content: 'plain', tags, metadata, index: false })
    const { file: got } = await client.getFile({ id: plain.id })
    assert.equal(got.status, 'upload_completed')
    assert.equal(got.index, false)
    assert.deepEqual(got.tags, tags)
    assert.deepEqual(got.metadata, metadata)

    const { file: idx } = await client.uploadFile({ key: unique('indexed') + '.md', content: '# Title\n\nSome text.', tags, index: true })
    const { file: gotIdx } = await client.getFile({ id: idx.id })
    assertFileShape(gotIdx)
    assert.equal(gotIdx.index, true)
    assert.equal(gotIdx.status, 'indexing_pending')
    assert.equal(gotIdx.size, Buffer.byteLength('# Title\n\nSome text.'))
    assert.deepEqual(gotIdx.tags, tags)
    await assertContent(gotIdx.url, Buffer.from('# Title\n\nSome text.'), 'indexed file (signed url)')
  })

  test('public_content with publicContentImmediatelyAccessible: a permanent unsigned url, same on every getFile', async () => {
    const key = unique('public') + '.bin'
    const { file: up } = await client.uploadFile({
      key,
      content: ALL_BYTES,
      accessPolicies: ['public_content'],
      publicContentImmediatelyAccessible: true,
    })
    const first = (await client.getFile({ id: up.id })).file
    const second = (await client.getFile({ id: up.id })).file
    assertFileShape(first)
    assert.equal(first.status, 'upload_completed')
    assert.deepEqual(first.accessPolicies, ['public_content'])
    assert.equal(first.url, second.url, 'a public url must be permanent')
    assert.ok(!/signature|expires/i.test(new URL(first.url).search), `a public url must carry no signature: ${first.url}`)
    await assertContent(first.url, ALL_BYTES, 'public immediately accessible')
  })

  test('public_content without publicContentImmediatelyAccessible: public once upload_completed', async () => {
    const { file: up } = await client.uploadFile({ key: unique('public-later') + '.txt', content: 'later', accessPolicies: ['public_content'] })
    const a = (await client.getFile({ id: up.id })).file
    const b = (await client.getFile({ id: up.id })).file
    assert.equal(a.status, 'upload_completed')
    assert.equal(a.url, b.url)
    assert.ok(!/signature|expires/i.test(new URL(a.url).search), `a public url must carry no signature: ${a.url}`)
    await assertContent(a.url, Buffer.from('later'), 'public after upload')
  })

  test('public_content + index: the public url serves content while indexing only with publicContentImmediatelyAccessible', async () => {
    const now = await client.uploadFile({
      key: unique('pub-idx-now') + '.md', content: 'now', index: true,
      accessPolicies: ['public_content'], publicContentImmediatelyAccessible: true,
    })
    const fNow = (await client.getFile({ id: now.file.id })).file
    assert.equal(fNow.status, 'indexing_pending')
    await assertContent(fNow.url, Buffer.from('now'), 'public indexing, immediately accessible')

    const later = await client.uploadFile({ key: unique('pub-idx-later') + '.md', content: 'later', index: true, accessPolicies: ['public_content'] })
    const fLater = (await client.getFile({ id: later.file.id })).file
    assert.equal(fLater.status, 'indexing_pending')
    const { res } = await download(fLater.url)
    assert.ok(!res.ok, `public content still being indexed must not be served yet, got ${res.status}`)
  })

  test('a private file url is signed; a tampered signature is refused', async () => {
    const { file: up } = await client.uploadFile({ key: unique('private') + '.txt', content: 'secret' })
    const { file } = await client.getFile({ id: up.id })
    const url = new URL(file.url)
    assert.ok(url.searchParams.get('signature'), `a private url must be signed: ${file.url}`)
    await assertContent(file.url, Buffer.from('secret'), 'private')
    const sig = url.searchParams.get('signature')
    url.searchParams.set('signature', (sig[0] === 'a' ? 'b' : 'a') + sig.slice(1))
    const { res } = await download(url.toString())
    assert.ok(res.status >= 400 && res.status < 500, `a tampered url must be refused, got ${res.status}`)
  })

  test('uploading again to an existing key replaces the content and keeps the id', async () => {
    const key = unique('replace') + '.txt'
    const { file: one } = await client.uploadFile({ key, content: 'first version' })
    const oldUrl = (await client.getFile({ id: one.id })).file.url
    const { file: two } = await client.uploadFile({ key, content: 'v2' })
    assert.equal(two.id, one.id, 'upsert by key keeps the file id')
    const { file } = await client.getFile({ id: one.id })
    assert.equal(file.size, 2)
    await assertContent(file.url, Buffer.from('v2'), 'replaced content')
    const { res } = await download(oldUrl)
    assert.ok(!res.ok, `the url of the replaced content must stop working, got ${res.status}`)
    const { files } = await client.listFiles({ ids: [one.id] })
    assert.equal(files.length, 1)
  })

  test('expiresAt is stored at minute precision', async () => {
    const at = new Date(Date.now() + 2 * 24 * 3600_000)
    at.setUTCSeconds(42, 123)
    const { file: up } = await client.uploadFile({ key: unique('expiring') + '.txt', content: 'x', expiresAt: at.toISOString() })
    const { file } = await client.getFile({ id: up.id })
    assertIsoDate(file.expiresAt, 'expiresAt')
    const want = new Date(at)
    want.setUTCSeconds(0, 0)
    assert.equal(Date.parse(file.expiresAt), want.getTime(), `expiresAt ${file.expiresAt} should be ${want.toISOString()}`)
  })
})

// --------------------------------------------------------------- listFiles

describe('listFiles', () => {
  test('list.files({ tags, pageSize: 7 }).collect() returns exactly the 25 matching files once', async () => {
    const suite = unique('list')
    const matching = []
    for (let i = 0; i < 25; i++) {
      const { file } = await client.uploadFile({ key: `${suite}/m${i}.txt`, content: `m${i}`, tags: { suite, k: 'v' } })
      matching.push(file.id)
    }
    // Same suite, other values of k, and a file of the same suite without k.
    for (let i = 0; i < 4; i++) await client.uploadFile({ key: `${suite}/o${i}.txt`, content: 'o', tags: { suite, k: 'other' } })
    await client.uploadFile({ key: `${suite}/none.txt`, content: 'n', tags: { suite } })

    // By hand: pages of at most 7, chained with meta.nextToken.
    let nextToken
    let pages = 0
    const seen = []
    do {
      const res = await client.listFiles({ tags: { suite, k: 'v' }, pageSize: 7, nextToken })
      assert.ok(Array.isArray(res.files))
      assertPlainObject(res.meta, 'listFiles meta')
      assert.ok(res.files.length <= 7, `page ${pages} has ${res.files.length} files, more than pageSize 7`)
      res.files.forEach((f, i) => assertFileShape(f, `page ${pages} files[${i}]`))
      seen.push(...res.files.map((f) => f.id))
      nextToken = res.meta.nextToken
      if (nextToken !== undefined) assert.equal(typeof nextToken, 'string')
      pages++
      assert.ok(pages < 50, 'pagination does not end')
    } while (nextToken)
    assert.ok(pages >= 4, `25 files at pageSize 7 must take at least 4 pages, took ${pages}`)
    assert.equal(new Set(seen).size, seen.length, 'a file appeared on two pages')
    assert.deepEqual([...seen].sort(), [...matching].sort())

    const all = await client.list.files({ tags: { suite, k: 'v' }, pageSize: 7 }).collect()
    const ids = all.map((f) => f.id)
    assert.equal(new Set(ids).size, ids.length, 'collect() returned a file twice')
    assert.deepEqual([...ids].sort(), [...matching].sort())
    for (const f of all) {
      assert.deepEqual(f.tags, { suite, k: 'v' })
      assert.equal(f.status, 'upload_completed')
    }

    // Without pageSize (server default), the whole suite.
    const whole = await client.list.files({ tags: { suite } }).collect()
    assert.equal(whole.length, 30)
  })

  test('tags: a list of values matches any of them; { not } excludes; keys combine with AND', async () => {
    const suite = unique('tagfilter')
    const mk = async (k, extra = {}) => (await client.uploadFile({ key: unique(`${suite}-${k}`), content: k, tags: { suite, k, ...extra } })).file.id
    const a = await mk('a')
    const b = await mk('b', { env: 'prod' })
    const c = await mk('c', { env: 'prod' })
    const x = await mk('x')
    const ids = async (tags) => (await client.list.files({ tags, pageSize: 2 }).collect()).map((f) => f.id).sort()

    assert.deepEqual(await ids({ suite }), [a, b, c, x].sort())
    assert.deepEqual(await ids({ suite, k: ['a', 'b'] }), [a, b].sort())
    assert.deepEqual(await ids({ suite, k: { not: 'x' } }), [a, b, c].sort())
    assert.deepEqual(await ids({ suite, k: { not: ['x', 'a'] } }), [b, c].sort())
    assert.deepEqual(await ids({ suite, k: ['a', 'b'], env: 'prod' }), [b])
    assert.deepEqual(await ids({ suite, k: 'nope' }), [])
  })

  test('ids, indexed, and sortField / sortDirection', async () => {
    const suite = unique('sorting')
    const made = []
    for (const [name, size, index] of [['b', 3, false], ['a', 1, true], ['c', 2, false]]) {
      const { file } = await client.uploadFile({ key: `${suite}/${name}`, content: 'z'.repeat(size), tags: { suite }, index })
      made.push(file)
    }
    const byIds = await client.listFiles({ ids: [made[0].id, made[2].id] })
    assert.deepEqual(byIds.files.map((f) => f.id).sort(), [made[0].id, made[2].id].sort())

    const indexed = await client.list.files({ tags: { suite }, indexed: true }).collect()
    assert.deepEqual(indexed.map((f) => f.id), [made[1].id])
    const notIndexed = await client.list.files({ tags: { suite }, indexed: false }).collect()
    assert.deepEqual(notIndexed.map((f) => f.id).sort(), [made[0].id, made[2].id].sort())

    const keys = async (sortField, sortDirection) =>
      (await client.list.files({ tags: { suite }, sortField, sortDirection, pageSize: 1 }).collect()).map((f) => f.key.split('/')[1])
    assert.deepEqual(await keys('key', 'asc'), ['a', 'b', 'c'])
    assert.deepEqual(await keys('key', 'desc'), ['c', 'b', 'a'])
    assert.deepEqual(await keys('size', 'asc'), ['a', 'c', 'b'])
    assert.deepEqual(await keys('createdAt', 'asc'), ['b', 'a', 'c'])
  })
})

// ------------------------------------------------------ updateFileMetadata

describe('updateFileMetadata', () => {
  test('metadata and tags merge, null removes a key; content is unchanged', async () => {
    const { file: up } = await client.uploadFile({
      key: unique('meta') + '.txt',
      content: 'keep me',
      metadata: { a: 1, b: 'x', gone: true },
      tags: { keep: 'k', drop: 'd' },
    })
    const { file: updated } = await client.updateFileMetadata({
      id: up.id,
      metadata: { b: 'y', c: [1, 2], gone: null },
      tags: { drop: null, add: 'a' },
    })
    assertFileShape(updated, 'updateFileMetadata file')
    assert.deepEqual(updated.metadata, { a: 1, b: 'y', c: [1, 2] })
    assert.deepEqual(updated.tags, { keep: 'k', add: 'a' })
    assert.ok(Date.parse(updated.updatedAt) >= Date.parse(up.updatedAt))

    const { file } = await client.getFile({ id: up.id })
    assert.deepEqual(file.metadata, { a: 1, b: 'y', c: [1, 2] })
    assert.deepEqual(file.tags, { keep: 'k', add: 'a' })
    assert.equal(file.status, 'upload_completed')
    assert.equal(file.size, 7)
    await assertContent(file.url, Buffer.from('keep me'), 'after updateFileMetadata')

    // Tag filters see the new tags only.
    const listed = await client.list.files({ tags: { keep: 'k', add: 'a' } }).collect()
    assert.ok(listed.some((f) => f.id === up.id))
    const dropped = await client.list.files({ tags: { drop: 'd', keep: 'k' } }).collect()
    assert.ok(!dropped.some((f) => f.id === up.id), 'a removed tag must no longer match')

    // An empty update changes nothing.
    const { file: same } = await client.updateFileMetadata({ id: up.id })
    assert.deepEqual(same.metadata, file.metadata)
    assert.deepEqual(same.tags, file.tags)
  })

  test('accessPolicies replace (the url becomes public), expiresAt sets and null removes', async () => {
    const { file: up } = await client.uploadFile({ key: unique('policies') + '.txt', content: 'pp' })
    const at = new Date(Date.now() + 3 * 24 * 3600_000)
    at.setUTCSeconds(0, 0)
    const { file: pub } = await client.updateFileMetadata({ id: up.id, accessPolicies: ['public_content'], expiresAt: at.toISOString() })
    assert.deepEqual(pub.accessPolicies, ['public_content'])
    assert.equal(Date.parse(pub.expiresAt), at.getTime())
    const { file } = await client.getFile({ id: up.id })
    assert.ok(!/signature/.test(file.url), `a public_content file has an unsigned url: ${file.url}`)
    await assertContent(file.url, Buffer.from('pp'), 'made public')

    const { file: cleared } = await client.updateFileMetadata({ id: up.id, expiresAt: null, accessPolicies: [] })
    assert.equal(cleared.expiresAt, undefined)
    assert.deepEqual(cleared.accessPolicies, [])
    const { file: after } = await client.getFile({ id: up.id })
    assert.equal(after.expiresAt, undefined)
    assert.match(after.url, /signature=/)
  })

  test('unknown file, long tag value, and past expiresAt are rejected', async () => {
    await rejectsWith(client.updateFileMetadata({ id: 'file_doesnotexist000000000000', tags: { a: 'b' } }), ResourceNotFoundError, 'ResourceNotFound')
    const { file } = await client.uploadFile({ key: unique('bad-update'), content: 'x', tags: { t: 'v' } })
    await rejectsWith(client.updateFileMetadata({ id: file.id, tags: { t: 'v'.repeat(1001) } }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(
      client.updateFileMetadata({ id: file.id, expiresAt: new Date(Date.now() - 3600_000).toISOString() }),
      InvalidPayloadError,
      'InvalidPayload'
    )
    const { file: got } = await client.getFile({ id: file.id })
    assert.deepEqual(got.tags, { t: 'v' }, 'a rejected update must change nothing')
    assert.equal(got.expiresAt, undefined)
  })
})

// ----------------------------------------------------------------- copyFile

describe('copyFile', () => {
  test('copy to a new key; an existing key needs overwrite', async () => {
    const srcKey = unique('copy-src') + '.bin'
    const { file: src } = await client.uploadFile({ key: srcKey, content: ALL_BYTES, tags: { role: 'src' }, metadata: { m: 1 } })

    const destKey = unique('copy-dest') + '.bin'
    const { file: copy } = await client.copyFile({ idOrKey: src.id, destinationKey: destKey })
    assertFileShape(copy, 'copyFile file')
    assert.notEqual(copy.id, src.id)
    assert.equal(copy.key, destKey)
    assert.equal(copy.botId, botId)
    assert.equal(copy.size, ALL_BYTES.length)
    assert.equal(copy.status, 'upload_completed')
    assert.equal(copy.contentType, 'application/octet-stream')
    assert.deepEqual(copy.tags, { role: 'src' })
    assert.deepEqual(copy.metadata, { m: 1 })
    await assertContent((await client.getFile({ id: copy.id })).file.url, ALL_BYTES, 'copy')
    await assertContent((await client.getFile({ id: src.id })).file.url, ALL_BYTES, 'source after copy')

    // The destination exists now.
    const { file: other } = await client.uploadFile({ key: unique('copy-other') + '.txt', content: 'other content' })
    await rejectsWith(client.copyFile({ idOrKey: other.id, destinationKey: destKey }), AlreadyExistsError, 'AlreadyExists')
    await rejectsWith(client.copyFile({ idOrKey: other.id, destinationKey: destKey, overwrite: false }), AlreadyExistsError, 'AlreadyExists')
    await assertContent((await client.getFile({ id: copy.id })).file.url, ALL_BYTES, 'destination untouched after AlreadyExists')

    const { file: over } = await client.copyFile({ idOrKey: other.id, destinationKey: destKey, overwrite: true })
    assert.equal(over.key, destKey)
    assert.equal(over.size, Buffer.byteLength('other content'))
    const listed = await client.listFiles({ ids: [over.id] })
    assert.equal(listed.files.length, 1)
    await assertContent((await client.getFile({ id: over.id })).file.url, Buffer.from('other content'), 'overwritten copy')
    const byKey = await client.list.files({ pageSize: 100 }).collect()
    assert.equal(byKey.filter((f) => f.key === destKey).length, 1, 'exactly one file has the destination key')
  })

  test('the source may be given by key; a key with a slash is path-escaped', async () => {
    const srcKey = `${unique('dir')}/copy by key.txt`
    await client.uploadFile({ key: srcKey, content: 'by key' })
    const destKey = `${unique('dir')}/copied.txt`
    const { file } = await client.copyFile({ idOrKey: srcKey, destinationKey: destKey })
    assert.equal(file.key, destKey)
    await assertContent((await client.getFile({ id: file.id })).file.url, Buffer.from('by key'), 'copy by key')
  })

  test('copying an unknown file rejects with ResourceNotFoundError', async () => {
    await rejectsWith(client.copyFile({ idOrKey: 'file_doesnotexist000000000000', destinationKey: unique('x') }), ResourceNotFoundError, 'ResourceNotFound')
  })
})

// --------------------------------------------------------------- deleteFile

describe('deleteFile', () => {
  test('deleteFile answers {}; the file is gone from getFile, listFiles and its url', async () => {
    const suite = unique('delete')
    const { file: up } = await client.uploadFile({ key: unique('doomed') + '.txt', content: 'bye', tags: { suite } })
    const { file } = await client.getFile({ id: up.id })
    await assertContent(file.url, Buffer.from('bye'), 'before delete')

    assert.deepEqual(await client.deleteFile({ id: up.id }), {})
    await rejectsWith(client.getFile({ id: up.id }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(client.deleteFile({ id: up.id }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(client.updateFileMetadata({ id: up.id, tags: { a: 'b' } }), ResourceNotFoundError, 'ResourceNotFound')
    assert.deepEqual((await client.listFiles({ tags: { suite } })).files, [])
    const { res } = await download(file.url)
    assert.ok(!res.ok, `the url of a deleted file must stop working, got ${res.status}`)
  })
})

// -------------------------------------------------- listFileTags and values

describe('listFileTags and listFileTagValues', () => {
  test('distinct tag names and values, paginated', async () => {
    const color = unique('color')
    const size = unique('size')
    await client.uploadFile({ key: unique('t1'), content: '1', tags: { [color]: 'red', [size]: 'L' } })
    await client.uploadFile({ key: unique('t2'), content: '2', tags: { [color]: 'blue' } })
    await client.uploadFile({ key: unique('t3'), content: '3', tags: { [color]: 'red' } })
    await client.uploadFile({ key: unique('t4'), content: '4', tags: { [color]: 'green' } })

    const first = await client.listFileTags({})
    assert.ok(Array.isArray(first.tags))
    assertPlainObject(first.meta, 'listFileTags meta')
    const names = await client.list.fileTags({ pageSize: 2 }).collect()
    assert.equal(new Set(names).size, names.length, 'tag names must be distinct')
    assert.ok(names.includes(color), `${color} must be listed`)
    assert.ok(names.includes(size), `${size} must be listed`)
    for (const n of names) assert.equal(typeof n, 'string')

    const page = await client.listFileTagValues({ tag: color })
    assert.ok(Array.isArray(page.values))
    assertPlainObject(page.meta, 'listFileTagValues meta')
    const values = await client.list.fileTagValues({ tag: color, pageSize: 1 }).collect()
    assert.deepEqual([...values].sort(), ['blue', 'green', 'red'])
    assert.deepEqual(await client.list.fileTagValues({ tag: size }).collect(), ['L'])
    assert.deepEqual(await client.list.fileTagValues({ tag: unique('unused') }).collect(), [])
  })
})

// ------------------------------------------------------------------- errors

describe('errors', () => {
  test('upsertFile with an unknown nested indexing.configuration property → InvalidPayloadError', async () => {
    // The client drops unknown top-level fields but sends nested objects as given.
    await rejectsWith(
      client.upsertFile({ key: unique('bad-indexing'), size: 1, index: true, indexing: { configuration: { bogus: 1 } } }),
      InvalidPayloadError,
      'InvalidPayload'
    )
    await rejectsWith(
      client.upsertFile({ key: unique('bad-parsing'), size: 1, indexing: { configuration: { parsing: { mode: 'standard', extra: true } } } }),
      InvalidPayloadError,
      'InvalidPayload'
    )
    await rejectsWith(
      client.upsertFile({ key: unique('bad-bounds'), size: 1, indexing: { configuration: { chunking: { maximumChunkLength: 99 } } } }),
      InvalidPayloadError,
      'InvalidPayload'
    )
    // A valid configuration is accepted and kept in metadata.
    const configuration = { parsing: { mode: 'standard', minimumParagraphLength: 50 }, chunking: { maximumChunkLength: 500 }, stack: 'realtime-v1' }
    const { file } = await client.upsertFile({ key: unique('good-indexing') + '.md', size: 1, index: true, indexing: { configuration } })
    assertFileShape(file, 'upsertFile file')
    assert.equal(file.status, 'upload_pending')
    assert.deepEqual(file.metadata.indexing, { configuration })
  })

  test('a tag value over 1000 characters → InvalidPayloadError (1000 is fine)', async () => {
    await rejectsWith(client.upsertFile({ key: unique('long-tag'), size: 1, tags: { t: 'v'.repeat(1001) } }), InvalidPayloadError, 'InvalidPayload')
    await rejectsWith(client.uploadFile({ key: unique('long-tag'), content: 'x', tags: { t: 'v'.repeat(1001) } }), InvalidPayloadError, 'InvalidPayload')
    const { file } = await client.uploadFile({ key: unique('max-tag'), content: 'x', tags: { t: 'v'.repeat(1000) } })
    assert.equal((await client.getFile({ id: file.id })).file.tags.t.length, 1000)
  })

  test('expiresAt in the past or over 90 days ahead → InvalidPayloadError', async () => {
    await rejectsWith(
      client.upsertFile({ key: unique('past'), size: 1, expiresAt: new Date(Date.now() - 60_000).toISOString() }),
      InvalidPayloadError,
      'InvalidPayload'
    )
    await rejectsWith(
      client.uploadFile({ key: unique('past'), content: 'x', expiresAt: '2001-01-01T00:00:00Z' }),
      InvalidPayloadError,
      'InvalidPayload'
    )
    await rejectsWith(
      client.upsertFile({ key: unique('far'), size: 1, expiresAt: new Date(Date.now() + 91 * 24 * 3600_000).toISOString() }),
      InvalidPayloadError,
      'InvalidPayload'
    )
  })

  test('getFile of an unknown id → ResourceNotFoundError', async () => {
    await rejectsWith(client.getFile({ id: 'file_doesnotexist000000000000' }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(client.getFile({ id: 'a/b c' }), ResourceNotFoundError, 'ResourceNotFound')
    await rejectsWith(client.deleteFile({ id: 'file_doesnotexist000000000000' }), ResourceNotFoundError, 'ResourceNotFound')
  })

  test('a bad token → UnauthorizedError', async () => {
    const bad = new Client({ apiUrl: server.apiUrl, token: 'bp_pat_' + 'x'.repeat(40), botId })
    await rejectsWith(bad.getFile({ id: 'file_doesnotexist000000000000' }), UnauthorizedError, 'Unauthorized')
    await rejectsWith(bad.listFiles({}), UnauthorizedError, 'Unauthorized')
    await rejectsWith(bad.upsertFile({ key: unique('x'), size: 1 }), UnauthorizedError, 'Unauthorized')
    // uploadFile surfaces the upsert's API error as is.
    await rejectsWith(bad.uploadFile({ key: unique('x'), content: 'x' }), UnauthorizedError, 'Unauthorized')
    const none = new Client({ apiUrl: server.apiUrl, botId })
    await rejectsWith(none.listFiles({}), UnauthorizedError, 'Unauthorized')
  })

  test('content over the declared size: the PUT to uploadUrl fails and the file is upload_failed', async () => {
    const { file } = await client.upsertFile({ key: unique('oversize') + '.txt', size: 3 })
    assert.equal(file.status, 'upload_pending')
    assert.equal(typeof file.uploadUrl, 'string')
    const res = await fetch(file.uploadUrl, { method: 'PUT', headers: { 'Content-Type': file.contentType }, body: 'more than three bytes' })
    const body = await res.text()
    assert.ok(!res.ok, `an upload larger than the declared size must fail, got ${res.status} ${body}`)
    assert.ok(res.status >= 400 && res.status < 500, `expected a 4xx, got ${res.status} ${body}`)

    const { file: got } = await client.getFile({ id: file.id })
    assertFileShape(got)
    assert.equal(got.status, 'upload_failed')
    assert.equal(typeof got.failedStatusReason, 'string')
    assert.ok(got.failedStatusReason.length > 0, 'failedStatusReason must say why')
    const { res: dl } = await download(got.url)
    assert.ok(!dl.ok, `a failed upload has no content, got ${dl.status}`)
  })

  test('an uploadUrl works once, with its exact bytes', async () => {
    const { file } = await client.upsertFile({ key: unique('exact') + '.bin', size: 4 })
    const ok = await fetch(file.uploadUrl, { method: 'PUT', headers: { 'Content-Type': file.contentType }, body: new Uint8Array([0, 255, 10, 13]) })
    assert.ok(ok.ok, `upload answered ${ok.status}: ${await ok.text()}`)
    const { file: got } = await client.getFile({ id: file.id })
    assert.equal(got.status, 'upload_completed')
    assert.equal(got.size, 4)
    await assertContent(got.url, Buffer.from([0, 255, 10, 13]), 'raw upload')
    const again = await fetch(file.uploadUrl, { method: 'PUT', headers: { 'Content-Type': file.contentType }, body: 'abcd' })
    assert.ok(!again.ok, `a used uploadUrl must not accept new content, got ${again.status}`)
    await assertContent(got.url, Buffer.from([0, 255, 10, 13]), 'content unchanged after reuse attempt')
  })

  test('uploadFile over a tiny file_max_size_bytes → UploadFileError (FileUploadError), file upload_failed', async () => {
    const { ws, files } = await freshWorkspace('tiny quota')
    await setQuotas(ws.id, { file_max_size_bytes: 10 })

    // Within the limit still works.
    const { file: small } = await files.uploadFile({ key: unique('small') + '.txt', content: '0123456789' })
    assert.equal((await files.getFile({ id: small.id })).file.status, 'upload_completed')

    let err
    try {
      await files.uploadFile({ key: unique('too-big') + '.txt', content: '0123456789A' })
    } catch (e) {
      err = e
    }
    assert.ok(err, 'uploadFile over the maximum file size must throw')
    assert.ok(err instanceof UploadFileError, `expected UploadFileError, got ${err?.stack ?? err}`)
    assert.equal(err.name, 'FileUploadError')
    assert.ok(!isApiError(err))
    assertFileShape(err.file, 'UploadFileError.file')
    assert.ok(err.innerError, 'UploadFileError carries the axios error')
    const status = err.innerError?.response?.status
    assert.ok(status >= 400 && status < 500, `the PUT to uploadUrl should answer 4xx, got ${status}`)

    const { file } = await files.getFile({ id: err.file.id })
    assert.equal(file.status, 'upload_failed')
    assert.equal(typeof file.failedStatusReason, 'string')
    assert.ok(file.failedStatusReason.length > 0)
    assert.equal(file.size, null, 'a failed upload has no size')

    // Back to the plan default: the same upload works.
    await setQuotas(ws.id, { file_max_size_bytes: null })
    const { file: retried } = await files.uploadFile({ key: unique('retry') + '.txt', content: '0123456789A' })
    assert.equal((await files.getFile({ id: retried.id })).file.status, 'upload_completed')
  })
})

// ------------------------------------------------------ who may use files

describe('access', () => {
  test('a bot API key works as the Files token of its bot only', async () => {
    const bak = await admin.createBotApiKey({ botId, note: 'files compat' })
    const asBot = new Client({ apiUrl: server.apiUrl, token: bak.value, botId })
    const { file: up } = await asBot.uploadFile({ key: unique('bak') + '.txt', content: 'from the bot' })
    const { file } = await client.getFile({ id: up.id })
    assert.equal(file.status, 'upload_completed')
    await assertContent(file.url, Buffer.from('from the bot'), 'uploaded with a bot API key')

    const { bot: other } = await admin.createBot({ name: 'other files bot' })
    const wrongBot = new Client({ apiUrl: server.apiUrl, token: bak.value, botId: other.id })
    await rejectsWith(wrongBot.listFiles({}), ForbiddenError, 'Forbidden')
    // Files belong to their bot.
    const otherFiles = new Client({ apiUrl: server.apiUrl, token: server.token, botId: other.id })
    await rejectsWith(otherFiles.getFile({ id: up.id }), ResourceNotFoundError, 'ResourceNotFound')
    assert.ok(!(await otherFiles.list.files({}).collect()).some((f) => f.id === up.id))
  })

  test('a workspace viewer may read files but not change them (ForbiddenError)', async () => {
    const email = `files-viewer-${process.pid}-${Date.now().toString(36)}@example.com`
    await admin.createWorkspaceMember({ email, role: 'viewer' })
    const viewer = new Client({ apiUrl: server.apiUrl, token: await server.issueToken(email), botId })

    const { file: up } = await client.uploadFile({ key: unique('for-viewer') + '.txt', content: 'read only' })
    const { file } = await viewer.getFile({ id: up.id })
    await assertContent(file.url, Buffer.from('read only'), 'viewer download')
    assert.ok((await viewer.listFiles({ ids: [up.id] })).files.length === 1)

    await rejectsWith(viewer.upsertFile({ key: unique('viewer'), size: 1 }), ForbiddenError, 'Forbidden')
    await rejectsWith(viewer.uploadFile({ key: unique('viewer'), content: 'x' }), ForbiddenError, 'Forbidden')
    await rejectsWith(viewer.updateFileMetadata({ id: up.id, tags: { a: 'b' } }), ForbiddenError, 'Forbidden')
    await rejectsWith(viewer.copyFile({ idOrKey: up.id, destinationKey: unique('viewer-copy') }), ForbiddenError, 'Forbidden')
    await rejectsWith(viewer.deleteFile({ id: up.id }), ForbiddenError, 'Forbidden')
    assert.equal((await client.getFile({ id: up.id })).file.status, 'upload_completed')
  })

  test(
    'a viewer cannot upload content through an uploadUrl read from getFile / listFiles',
        async () => {
      const email = `files-viewer2-${process.pid}-${Date.now().toString(36)}@example.com`
      await admin.createWorkspaceMember({ email, role: 'viewer' })
      const viewer = new Client({ apiUrl: server.apiUrl, token: await server.issueToken(email), botId })
      const { file: pending } = await client.upsertFile({ key: unique('pending') + '.txt', size: 5 })

      const { file: seen } = await viewer.getFile({ id: pending.id })
      const listed = (await viewer.listFiles({ ids: [pending.id] })).files[0]
      for (const url of [seen.uploadUrl, listed?.uploadUrl]) {
        if (url === undefined) continue // not exposed: fine
        const res = await fetch(url, { method: 'PUT', headers: { 'Content-Type': seen.contentType }, body: 'VIEWR' })
        assert.ok(!res.ok, `a viewer wrote file content through an uploadUrl from a read operation (PUT answered ${res.status})`)
      }
      const { file } = await client.getFile({ id: pending.id })
      assert.equal(file.status, 'upload_pending', 'the pending file must still wait for its owner\'s upload')
    }
  )
})

// ------------------------------------------------------------------- quotas

describe('workspace quotas and usages', () => {
  test('listWorkspaceQuotas, getWorkspaceQuota and listWorkspaceUsages through the client', async () => {
    const { ws, wsAdmin, files } = await freshWorkspace('usage')

    const { quotas } = await wsAdmin.listWorkspaceQuotas({ id: ws.id })
    assert.ok(Array.isArray(quotas))
    for (const q of quotas) {
      assert.equal(typeof q.type, 'string')
      assert.equal(typeof q.value, 'number')
      assert.equal(typeof q.period, 'string')
    }
    const types = quotas.map((q) => q.type)
    for (const t of ['file_max_size_bytes', 'knowledgebase_vector_storage']) assert.ok(types.includes(t), `listWorkspaceQuotas must include ${t}`)

    await setQuotas(ws.id, { file_max_size_bytes: 12345 })
    const { quota } = await wsAdmin.getWorkspaceQuota({ id: ws.id, type: 'file_max_size_bytes' })
    assert.equal(quota.type, 'file_max_size_bytes')
    assert.equal(quota.value, 12345)
    assert.equal(typeof quota.period, 'string')
    await setQuotas(ws.id, { file_max_size_bytes: null })
    const { quota: reset } = await wsAdmin.getWorkspaceQuota({ id: ws.id, type: 'file_max_size_bytes' })
    assert.ok(reset.value > 12345, `null returns to the plan default, got ${reset.value}`)

    const usage = async () => {
      const { usages } = await wsAdmin.listWorkspaceUsages({ id: ws.id, type: 'file_storage_bytes' })
      assert.ok(Array.isArray(usages))
      assert.equal(usages.length, 1)
      const [u] = usages
      assert.equal(u.type, 'file_storage_bytes')
      assert.equal(typeof u.id, 'string')
      assert.equal(typeof u.period, 'string')
      assert.equal(typeof u.quota, 'number')
      assert.equal(typeof u.value, 'number')
      return u.value
    }
    const before = await usage()
    assert.equal(before, 0, 'a fresh workspace stores nothing')
    const { file } = await files.uploadFile({ key: unique('usage') + '.bin', content: ALL_BYTES })
    assert.equal(await usage(), before + ALL_BYTES.length, 'usage grows by the uploaded size')
    const { file: copy } = await files.copyFile({ idOrKey: file.id, destinationKey: unique('usage-copy') })
    assert.equal(await usage(), before + 2 * ALL_BYTES.length, 'a copy counts too')
    await files.deleteFile({ id: file.id })
    assert.equal(await usage(), before + ALL_BYTES.length, 'usage shrinks after deleteFile')
    await files.deleteFile({ id: copy.id })
    assert.equal(await usage(), before)

    // The bootstrap workspace's usage is its own.
    const { usages: other } = await admin.listWorkspaceUsages({ id: server.workspaceId, type: 'file_storage_bytes' })
    assert.ok(other[0].value > 0, 'the bootstrap workspace has files from the other tests')
  })

  test('file_storage_bytes quota: an upload that would exceed it fails and the file is upload_failed', async () => {
    const { ws, wsAdmin, files } = await freshWorkspace('storage quota')
    await setQuotas(ws.id, { file_storage_bytes: 600 })
    await files.uploadFile({ key: unique('fits') + '.bin', content: ALL_BYTES }) // 512 of 600
    const err = await files.uploadFile({ key: unique('overflows') + '.bin', content: ALL_BYTES }).then(
      () => assert.fail('an upload over the storage quota must fail'),
      (e) => e
    )
    assert.ok(err instanceof UploadFileError, `expected UploadFileError, got ${err?.stack ?? err}`)
    const { file } = await files.getFile({ id: err.file.id })
    assert.equal(file.status, 'upload_failed')
    assert.ok(file.failedStatusReason?.length > 0)
    const { usages } = await wsAdmin.listWorkspaceUsages({ id: ws.id, type: 'file_storage_bytes' })
    assert.equal(usages[0].value, 512, 'the failed upload must not count')
    assert.equal(usages[0].quota, 600)
  })

  test(
    'listWorkspaceUsages: usages[].id is the workspace id',
        async () => {
      const { usages } = await admin.listWorkspaceUsages({ id: server.workspaceId, type: 'file_storage_bytes' })
      assert.equal(usages[0].id, server.workspaceId)
    }
  )
})

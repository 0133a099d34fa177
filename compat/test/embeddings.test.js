// The local embeddings model recipe (docs/indexing.md, "A local embeddings
// model"): scripts/embeddings-server started as a user starts it, the server
// pointed at it with --embeddings-url, files indexed and searched through the
// official @botpress/client. Its vectors carry meaning: a question in other
// words than the document finds it in the vector ranking alone, which the
// built-in embedder's vectors (words and spelling only) do not.

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import path from 'node:path'
import readline from 'node:readline'
import { fileURLToPath } from 'node:url'
import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const SERVER = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'embeddings-server', 'server.mjs')
const MODEL = 'universal-sentence-encoder-lite'
const INDEX_TIMEOUT_MS = 60_000

const DOCS = {
  'lost.md': '# Lost deliveries\n\nIf your package does not arrive within 10 days, we send a replacement at no cost.',
  'membership.md': '# Ending your membership\n\nGo to My account, open Membership and choose End membership. No further payments are taken.',
  'sizes.md': '# Boot sizes\n\nOur hiking boots come in sizes 36 to 47, in half sizes too.',
  'care.md': '# Caring for boots\n\nClean your boots after every walk and let them dry away from heat.',
}

/** Starts the embeddings server on a free port; resolves to {url, stop}. */
async function startEmbeddings() {
  const child = spawn(process.execPath, [SERVER, '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines = readline.createInterface({ input: child.stdout })
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the embeddings server did not start within 60 s')), 60_000)
    child.once('exit', (code) => reject(new Error(`the embeddings server exited with ${code}`)))
    lines.on('line', (line) => {
      const m = /^embeddings server listening on (http:\/\/\S+)$/.exec(line)
      if (m) {
        clearTimeout(timer)
        resolve(m[1])
      }
    })
  })
  return {
    url,
    stop: () => new Promise((resolve) => {
      if (child.exitCode !== null) return resolve()
      child.once('exit', resolve)
      child.kill('SIGTERM')
    }),
  }
}

async function indexed(client, key, text) {
  const { file } = await client.uploadFile({ key, content: text, contentType: 'text/markdown', index: true })
  const deadline = Date.now() + INDEX_TIMEOUT_MS
  for (;;) {
    const { file: f } = await client.getFile({ id: file.id })
    if (f.status !== 'indexing_pending') return f
    assert.ok(Date.now() < deadline, `${key} still indexing after ${INDEX_TIMEOUT_MS} ms`)
    await new Promise((r) => setTimeout(r, 50))
  }
}

describe('a local embeddings model (--embeddings-url)', () => {
  let emb, server, client

  before(async () => {
    emb = await startEmbeddings()
    server = await startServer({ args: ['--embeddings-url', emb.url, '--embeddings-model', MODEL] })
    const admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
    const { bot } = await admin.createBot({ name: 'embeddings recipe' })
    client = new Client({ apiUrl: server.apiUrl, token: server.token, botId: bot.id })
    for (const [key, text] of Object.entries(DOCS)) {
      const f = await indexed(client, key, text)
      assert.equal(f.status, 'indexing_completed', `${key}: ${f.status} (${f.failedStatusReason})`)
    }
  })

  after(async () => {
    await server?.stop()
    await emb?.stop()
  })

  test('the server speaks the OpenAI embeddings API and refuses bad input by name', async () => {
    const post = (body) => fetch(`${emb.url}/embeddings`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    let res = await post(JSON.stringify({ model: MODEL, input: ['one', 'two', ''] }))
    assert.equal(res.status, 200)
    const body = await res.json()
    assert.deepEqual(body.data.map((d) => d.index), [0, 1, 2])
    for (const d of body.data) assert.equal(d.embedding.length, 512)
    for (const [bad, status, param] of [
      [JSON.stringify({ model: 'other', input: 'x' }), 404, 'model'],
      [JSON.stringify({ model: MODEL, input: [] }), 400, 'input'],
      [JSON.stringify({ model: MODEL, input: ['a', 7] }), 400, 'input[1]'],
      ['{not json', 400, null],
    ]) {
      res = await post(bad)
      assert.equal(res.status, status, bad)
      assert.equal((await res.json()).error.param, param, bad)
    }
  })

  test('questions in other words find their passage through the model\'s vectors', async () => {
    for (const [question, want] of [
      ['my parcel never turned up', 'If your package does not arrive'],
      ['how do i stop paying every month', 'Go to My account'],
    ]) {
      const { passages } = await client.searchFiles({ query: question, limit: 3 })
      assert.ok(passages.length > 0, question)
      assert.ok(passages[0].content.startsWith(want), `${question}: first ${JSON.stringify(passages[0].content)}`)
    }
  })
})

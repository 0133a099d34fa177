'use strict'
// Runs one bundle built by `bp build` (@botpress/sdk) for the Go package nodehost.
// Frames are newline-delimited JSON on extra descriptors, not stdin/stdout, because bundle code may write to
// process.stdout itself: calls arrive on fd 3; answers, logs, heartbeats and fatal errors leave on fd 4.
// Usage: node host.js <bundle.cjs>   or   node host.js --check <bundle.cjs>
const crypto = require('crypto')
const fs = require('fs')
const net = require('net')
const readline = require('readline')
const util = require('util')

const IN_FD = 3
const OUT_FD = 4
const MAX_MESSAGE = 16 * 1024
const MAX_BODY = 32 * 1024 * 1024 // the Go side drops larger frames
const FIELDS = ['conversationId', 'userId', 'workflowId', 'eventId', 'messageId']

const checkOnly = process.argv[2] === '--check'
const bundlePath = process.argv[checkOnly ? 3 : 2]

function send(frame) {
  let buf = Buffer.from(JSON.stringify(frame) + '\n')
  // Synchronous writes keep frames in order and flushed even when the process exits right after.
  while (buf.length > 0) {
    try {
      buf = buf.subarray(fs.writeSync(OUT_FD, buf))
    } catch (err) {
      if (err.code === 'EAGAIN') continue
      process.exit(1) // the server is gone
    }
  }
}

function log(level, text) {
  const frame = { t: 'log', level, msg: text }
  // With BP_LOG_FORMAT=json the SDK's logger writes {"msg": ..., "options": {userId?, conversationId?, ...}}.
  if (text.startsWith('{"msg":')) {
    try {
      const parsed = JSON.parse(text)
      if (typeof parsed.msg === 'string') {
        frame.msg = parsed.msg
        const options = parsed.options ?? {}
        for (const k of FIELDS) if (typeof options[k] === 'string') frame[k] = options[k]
      }
    } catch {}
  }
  if (frame.msg.length > MAX_MESSAGE) frame.msg = frame.msg.slice(0, MAX_MESSAGE) + '…'
  send(frame)
}

for (const [method, level] of [['log', 'info'], ['info', 'info'], ['debug', 'debug'], ['warn', 'warn'], ['error', 'error']]) {
  console[method] = (...args) => log(level, util.format(...args))
}

const messageOf = (err) => (err instanceof Error ? err.message : String(err))

// A failed Buffer allocation under the process's memory limit is a RangeError the bot could swallow; the
// process is then poisoned, so it is reported and ended like a V8 heap OOM.
const isOutOfMemory = (err) => err instanceof RangeError && /allocation failed|out of memory/i.test(err.message)

function die(message, code, oom) {
  send({ t: 'fatal', msg: message, oom: !!oom })
  process.exit(code)
}

process.on('uncaughtException', (err) => {
  log('error', 'Uncaught exception: ' + util.format(err))
  die('uncaught exception: ' + messageOf(err), 70, isOutOfMemory(err))
})
process.on('unhandledRejection', (reason) => {
  log('error', 'Unhandled promise rejection: ' + util.format(reason))
  if (isOutOfMemory(reason)) die(messageOf(reason), 71, true)
})

// loadError keeps the first lines of a load error, naming the bundle index.js as the developer knows it.
// A syntax error shows the source line and a caret under it; minified bundles have very long lines, so only
// a window around the caret is kept.
function loadError(err) {
  const lines = String(err?.stack ?? err).split(bundlePath).join('index.js').split('\n')
  const out = []
  for (let i = 0; i < lines.length && out.length < 6; i++) {
    const line = lines[i]
    if (/^\s+at /.test(line)) {
      if (line.includes('index.js')) out.push(line.trim())
      break
    }
    if (line.trim() === '') continue
    const next = lines[i + 1] ?? ''
    if (line.length > 160 && next.length > 0 && /^\s*\^*\s*$/.test(next)) {
      // node leaves the caret out when the column is past ~1000; then the source line says nothing either
      const caret = next.indexOf('^')
      if (caret >= 0) {
        const start = Math.max(0, caret - 60)
        out.push('…' + line.slice(start, start + 120) + '…', ' '.repeat(caret - start + 1) + '^')
      }
      i++
      continue
    }
    out.push(line.length > 160 ? line.slice(0, 160) + '…' : line)
  }
  return out.join('\n')
}

if (Number(process.versions.node.split('.')[0]) < 18) {
  die(`Node.js 18 or later is required to run bots, found ${process.version}`, 2)
}

let bot = null
try {
  const m = require(bundlePath)
  if (typeof m?.default?.handler === 'function') bot = m.default
  else if (typeof m?.handler === 'function') bot = m
} catch (err) {
  die(loadError(err), 2, isOutOfMemory(err))
}
if (!bot) die('the bundle exports no handler: it must be built by `bp build`', 2)
// definition is what the bundle declares that the platform keeps: its tables, each schema as JSON Schema
// (@botpress/sdk's schemas convert themselves). `bp deploy` cannot send them.
function definition() {
  const tables = {}
  for (const [name, t] of Object.entries(bot.props?.tables ?? {})) {
    if (!t || typeof t !== 'object') continue
    const out = {}
    for (const k of ['tags', 'factor', 'keyColumn', 'frozen', 'isComputeEnabled']) if (t[k] !== undefined) out[k] = t[k]
    const schema = t.schema
    out.schema = typeof schema?.toJSONSchema === 'function' ? schema.toJSONSchema() : schema
    tables[name] = out
  }
  return { tables }
}

if (checkOnly) {
  let def
  try {
    def = definition()
  } catch (err) {
    die('reading the tables the bundle declares: ' + messageOf(err), 2)
  }
  send({ t: 'ready', definition: def })
  process.exit(0)
}
send({ t: 'ready' })

function errorId() {
  const stamp = new Date().toISOString().replace(/[-:TZ]/g, '').split('.')[0]
  return `err_${stamp}x${crypto.randomBytes(4).toString('hex').toUpperCase()}`
}

function runtimeError(id, err) {
  const body = JSON.stringify({ id: errorId(), code: 500, type: 'Runtime', message: messageOf(err) })
  send({ t: 'answer', id, status: 500, headers: { 'content-type': 'application/json' }, body })
}

function bodyOf(body) {
  if (typeof body === 'string') return body
  if (body === undefined || body === null) return '{}' // what the SDK's own HTTP server sends
  if (body instanceof Uint8Array) return Buffer.from(body).toString()
  return JSON.stringify(body)
}

async function answer(id, req) {
  let res
  try {
    res = (await bot.handler(req)) ?? {}
  } catch (err) {
    if (isOutOfMemory(err)) die(messageOf(err), 71, true)
    log('error', 'Error while handling request: ' + util.format(err))
    return runtimeError(id, err)
  }
  try {
    const headers = {}
    for (const [k, v] of Object.entries(res.headers ?? {})) if (v !== undefined && v !== null) headers[k] = String(v)
    const body = bodyOf(res.body)
    if (body.length > MAX_BODY) throw new Error(`the response body is larger than ${MAX_BODY} bytes`)
    const status = Number.isInteger(res.status) ? res.status : 200
    send({ t: 'answer', id, status, headers, body })
  } catch (err) {
    if (isOutOfMemory(err)) die(messageOf(err), 71, true)
    log('error', 'Invalid response from the handler: ' + util.format(err))
    runtimeError(id, err)
  }
}

setInterval(() => send({ t: 'hb' }), 500)
const input = new net.Socket({ fd: IN_FD, readable: true, writable: false })
readline
  .createInterface({ input, crlfDelay: Infinity })
  .on('line', (line) => {
    let frame
    try {
      frame = JSON.parse(line)
    } catch {
      return
    }
    if (frame.t === 'call') answer(frame.id, frame.req)
  })
  .on('close', () => process.exit(0)) // the server stopped this process, or is gone

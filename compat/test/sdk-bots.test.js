// Bots written with @botpress/sdk and shipped with @botpress/cli, unchanged
// (docs/sdk-bots.md): the bot in sdk-bot/ is deployed with `bp deploy` (run
// by the server's Node bot host), run with `bp dev --tunnelUrl` (down the
// server's tunnel), and served by the user with `bp serve` (its url set);
// users talk to it with @botpress/chat.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import net from 'node:net'
import os from 'node:os'
import path from 'node:path'
import { Client as ChatClient } from '@botpress/chat'
import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'
import { runBp, startBp } from '../support/bp.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const compat = path.resolve(import.meta.dirname, '..')
const bpBin = path.join(compat, 'node_modules/@botpress/cli/bin.js')
const WAIT_MS = 60_000 // a hang guard, never a speed requirement

let server, client, home, project, children = []

/** Runs bp in the project to the end; rejects with its output when it fails. */
const bp = (args, opts) => runBp(bpBin, project, home, args, opts)

/** Starts a long-running bp command in the project (support/bp.js). */
function bpStart(args, env = {}) {
  const run = startBp(bpBin, project, home, args, { env, waitMs: WAIT_MS })
  children.push(run.child)
  return run
}

const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address()
      s.close(() => resolve(port))
    })
  })

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** The bot's error lines, to explain a reply that never came. */
async function errorLines(botId) {
  const { logs } = await client.getBotLogs({ id: botId, timeStart: '2020-01-01T00:00:00Z', level: 'error' })
  return logs.map((l) => `  ${l.message}`).join('\n')
}

/** A user of bot botId (chat at webhookUrl), in a new conversation, listening. */
async function talkTo(botId, webhookUrl) {
  const chat = await ChatClient.connect({ apiUrl: webhookUrl })
  const { conversation } = await chat.createConversation({})
  const listener = await chat.listenConversation({ id: conversation.id })
  const replies = []
  const waiting = []
  listener.on('message_created', (m) => {
    if (m.userId === chat.user.id) return
    replies.push(m)
    waiting.splice(0).forEach((w) => w())
  })
  const next = async (n) => {
    const deadline = Date.now() + WAIT_MS
    while (replies.length < n) {
      if (Date.now() > deadline) {
        throw new Error(`no reply #${n} within ${WAIT_MS} ms (got ${replies.map((r) => r.payload.text)}); the bot's error lines:\n${await errorLines(botId)}`)
      }
      await new Promise((r) => {
        waiting.push(r)
        setTimeout(r, 1000)
      })
    }
    return replies[n - 1].payload.text
  }
  return {
    chat,
    conversation,
    send: (text) => chat.createMessage({ conversationId: conversation.id, payload: { type: 'text', text } }),
    ask: async (text) => {
      const n = replies.length + 1
      await chat.createMessage({ conversationId: conversation.id, payload: { type: 'text', text } })
      return next(n)
    },
    // The reply's signal may arrive before createEvent's response: the
    // reply awaited is counted before the event is sent.
    sendEvent: async (payload) => {
      const n = replies.length + 1
      await chat.createEvent({ conversationId: conversation.id, payload })
      return next(n)
    },
    close: () => listener.disconnect(),
  }
}

/** Waits for a log line of the bot whose message contains every part. */
async function waitLog(botId, parts, query = {}) {
  const deadline = Date.now() + WAIT_MS * 2
  for (;;) {
    const { logs } = await client.getBotLogs({ id: botId, timeStart: '2020-01-01T00:00:00Z', ...query })
    const line = logs.find((l) => parts.every((p) => l.message.includes(p)))
    if (line) return line
    if (Date.now() > deadline) throw new Error(`no log line with ${JSON.stringify(parts)}; the bot's logs:\n${logs.map((l) => `${l.level} ${l.message}`).join('\n')}`)
    await sleep(200)
  }
}

const webhookOf = async (id) => (await client.getBot({ id })).bot.integrations.chat.webhookUrl

before(async () => {
  server = await startServer()
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  home = await fs.mkdtemp(path.join(os.tmpdir(), 'bp-home-'))
  project = await fs.mkdtemp(path.join(compat, '.sdk-bot-'))
  await fs.cp(path.join(compat, 'sdk-bot'), project, { recursive: true })
  await bp(['login', '--apiUrl', server.apiUrl, '--token', server.token, '--workspaceId', server.workspaceId, '-y'])
})

after(async () => {
  for (const c of children) {
    try {
      process.kill(-c.pid, 'SIGKILL')
    } catch {}
  }
  await server?.stop()
  await fs.rm(project, { recursive: true, force: true })
  await fs.rm(home, { recursive: true, force: true })
})

let deployed // the bot bp deploy created

test('bp deploy: the server runs the bundle; users get replies, state and table rows persist, actions answer, logs show the logger', async () => {
  const out = await bp(['deploy', '-y', '--createNewBot'])
  const id = out.match(/Bot created with ID "([^"]+)"/)?.[1]
  assert.ok(id, `no bot id in:\n${out}`)
  assert.match(out, /Bot deployed/)
  deployed = id
  await client.updateBot({ id, maxExecutionTime: 3 })
  const botClient = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId, botId: id })
  // The table the bundle declares exists before any event ran.
  const { table } = await botClient.getTable({ table: 'notesTable' })
  assert.deepEqual(Object.keys(table.schema.properties).sort(), ['count', 'note'])

  const u = await talkTo(id, await webhookOf(id))
  assert.equal(await u.ask('hello'), 'v1 You said: hello (#1)')
  assert.equal(await u.ask('again'), 'v1 You said: again (#2)')
  assert.equal(await u.sendEvent({ x: 1 }), 'custom: {"x":1}')

  const { state } = await botClient.getState({ type: 'conversation', id: u.conversation.id, name: 'counter' })
  assert.deepEqual(state.payload, { count: 2 })
  const { rows } = await botClient.findTableRows({ table: 'notesTable', orderBy: 'count' })
  assert.deepEqual(rows.map((r) => [r.note, r.count]), [['hello', 1], ['again', 2]])
  const { output } = await botClient.callAction({ type: 'double', input: { value: 21 } })
  assert.deepEqual(output, { value: 42, version: 'v1' })

  const line = await waitLog(id, ['message 2: again'])
  assert.equal(line.conversationId, u.conversation.id)
  assert.equal(line.level, 'info')

  // A bot that throws, hangs past its deadline or crashes its process fails
  // that event, with the reason in its logs; the next event is handled.
  await u.send('throw')
  await waitLog(id, ['the bot threw on purpose'], { level: 'error' })
  await u.send('hang')
  await waitLog(id, ['did not answer within its deadline (3s)'], { level: 'error' })
  await u.send('crash')
  await waitLog(id, ['status 3'], { level: 'error' })
  assert.equal(await u.ask('still there'), 'v1 You said: still there (#3)')
  u.close()
})

test('bp dev --tunnelUrl: the dev bot answers down the tunnel, and a code change is picked up', async () => {
  const port = await freePort()
  const dev = bpStart(['dev', '--tunnelUrl', `${server.apiUrl}/v1/tunnels`, '--port', String(port), '-y'])
  try {
    const [, id] = await dev.wait(/Dev Bot deployed with id "([^"]+)"/)
    await dev.wait(/Listening on port/) // bp dev starts its worker after the deploy
    const { bot } = await client.getBot({ id })
    assert.equal(bot.dev, true)
    assert.match(bot.url, /^http:\/\/127\.0\.0\.1:\d+\/[0-9a-f-]{36}$/)
    const u = await talkTo(id, bot.integrations.chat.webhookUrl)
    assert.equal(await u.ask('hi dev'), 'v1 You said: hi dev (#1)')
    await waitLog(id, ['delivered message', 'to tunnel'])

    const mark = dev.mark()
    const src = path.join(project, 'src/index.ts')
    // Written whole and renamed into place, as editors save: a write in
    // place can reach bp dev's watcher as two changes, and two overlapping
    // rebuilds in bp dev lose the "deployed" line this test waits for.
    await fs.writeFile(src + '.tmp', (await fs.readFile(src, 'utf8')).replace("const VERSION = 'v1'", "const VERSION = 'v2'"))
    await fs.rename(src + '.tmp', src)
    await dev.wait(/Dev Bot deployed with id/, mark)
    await dev.wait(/Listening on port/, mark)
    // The worker reloads after the deploy: ask until the new code answers.
    let text
    for (let i = 0; i < 30 && !(text ?? '').startsWith('v2'); i++) {
      text = await u.ask(`after change ${i}`)
      if (!text.startsWith('v2')) await sleep(500)
    }
    assert.match(text, /^v2 You said: after change \d+ \(#\d+\)$/)
    u.close()
  } finally {
    dev.stop()
  }
})

test('bp serve: a bot the user serves, with its url set, answers too', async () => {
  const port = await freePort()
  const serve = bpStart(['serve', '--port', String(port)], { BP_API_URL: server.apiUrl, BP_TOKEN: server.token })
  try {
    await serve.wait(/Listening on port/)
    await client.updateBot({ id: deployed, url: `http://127.0.0.1:${port}` })
    const u = await talkTo(deployed, await webhookOf(deployed))
    assert.match(await u.ask('served'), /^v2 You said: served \(#1\)$/)
    await waitLog(deployed, ['delivered message', `to http://127.0.0.1:${port}`])
    u.close()
  } finally {
    serve.stop()
    await client.updateBot({ id: deployed, url: null })
  }
})

test('the recurring event fires (its cron is every minute)', async () => {
  await waitLog(deployed, ['event tick: {"note":"every minute"}'])
})

// The echo round trip of a bot written with @botpress/sdk and run by the
// server's Node bot host, against the same round trip of a bot in the
// embedded model, in the same run on the same server: one user, one message
// at a time, each sent when the previous reply arrived on the conversation's
// signal stream (from createMessage to the reply's signal). Prints p50, p99
// and max of each, and the CPU time per round trip of the server and of the
// bots' processes (where /proc is there to read it).
//
//   make build && cd compat && npm ci && BOTPLATFORM_BIN=$PWD/../bin/botplatform node bench/sdk-echo.mjs [rounds]
//
// The SDK bot is sdk-bot/ built with `bp build` (its "echo:" messages are
// answered at once) and deployed as updateBot's code, as `bp deploy` does.

import { spawnSync } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'
import { processCPU, roundTrips, summary } from './roundtrips.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const rounds = Number(process.argv[2] || 1000)
const warmup = 50
const compat = path.resolve(import.meta.dirname, '..')
const embedded = `bot.on.message('*', async ({ message, client }) => {
  await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
})`

async function buildSDKBot() {
  const dir = await fs.mkdtemp(path.join(compat, '.sdk-bot-'))
  await fs.cp(path.join(compat, 'sdk-bot'), dir, { recursive: true })
  const home = await fs.mkdtemp(path.join(os.tmpdir(), 'bp-home-'))
  const r = spawnSync(process.execPath, [path.join(compat, 'node_modules/@botpress/cli/bin.js'), 'build'], { cwd: dir, env: { ...process.env, HOME: home }, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`bp build failed:\n${r.stdout}${r.stderr}`)
  const code = await fs.readFile(path.join(dir, '.botpress/dist/index.js'), 'utf8')
  await fs.rm(dir, { recursive: true, force: true })
  await fs.rm(home, { recursive: true, force: true })
  return code
}

const sdkCode = await buildSDKBot()
const server = await startServer({ args: ['--log-level', 'warn'] })
try {
  const client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  const { bot: e } = await client.createBot({ name: 'embedded echo', code: embedded })
  const { bot: s } = await client.createBot({ name: 'sdk echo' })
  await client.updateBot({ id: s.id, code: sdkCode })
  console.log(`${rounds} sequential echo round trips (after ${warmup} to warm up):`)
  const run = async (name, bot) => {
    const before = processCPU(server.pid)
    const lat = await roundTrips(bot.integrations.chat.webhookUrl, { rounds, warmup, prefix: 'echo:' })
    const after = processCPU(server.pid)
    const perTrip = (k) => ((after[k] - before[k]) / (rounds + warmup)).toFixed(2)
    const cpu = after ? `; CPU per round trip: server ${perTrip('self')} ms, bot processes ${perTrip('children')} ms` : ''
    console.log(`  ${name}  ${summary(lat)}${cpu}`)
  }
  await run('embedded model:', e)
  await run('SDK bot (Node): ', s)
} finally {
  await server.stop()
}

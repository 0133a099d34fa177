// One user chatting with the echo bot through the official chat client, one
// message at a time: each message is sent when the reply to the previous
// one has arrived on the conversation's signal stream. Prints the round
// trips' p50, p99 and maximum (from createMessage to the reply's signal),
// then the same of their two halves (createMessage's own time, and from its
// response to the reply's signal),
// measured after warmup round trips (default 1,000): the steady state,
// once Node's compiler has optimized the client and the server's caches,
// pools and the bot's warm VMs are in use.
//
//   make build && cd compat && BOTPLATFORM_BIN=$PWD/../bin/botplatform node bench/sequential.mjs [rounds] [warmup]
//
// The server runs on SQLite in a temporary data directory.

import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'
import { roundTrips, summary } from './roundtrips.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const rounds = Number(process.argv[2] || 1000)
const warmup = Number(process.argv[3] ?? 1000)
const code = `bot.on.message('*', async ({ message, client }) => {
  await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
})`

const server = await startServer({ args: ['--log-level', 'warn'] })
try {
  const client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  const { bot } = await client.createBot({ name: 'sequential bench', code })
  const lat = await roundTrips(bot.integrations.chat.webhookUrl, { rounds, warmup })
  const slow = lat.filter((x) => x > 100).length
  console.log(`${rounds} sequential round trips (after ${warmup} to warm up): ${summary(lat)}, ${slow} over 100 ms`)
  console.log(`  createMessage: ${summary(lat.request)}; from its response to the reply: ${summary(lat.reply)}`)
} finally {
  await server.stop()
}

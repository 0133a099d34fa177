// One user chatting with the echo bot through the official chat client, one
// message at a time: each message is sent when the reply to the previous
// one has arrived on the conversation's signal stream. Prints the round
// trips' p50, p99 and maximum (from createMessage to the reply's signal).
//
//   make build && cd compat && BOTPLATFORM_BIN=$PWD/../bin/botplatform node bench/sequential.mjs [rounds]
//
// The server runs on SQLite in a temporary data directory.

import { Client as ChatClient } from '@botpress/chat'
import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const rounds = Number(process.argv[2] || 1000)
const warmup = 20
const code = `bot.on.message('*', async ({ message, client }) => {
  await client.createMessage({ conversationId: message.conversationId, payload: message.payload })
})`

const server = await startServer({ args: ['--log-level', 'warn'] })
try {
  const client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  const { bot } = await client.createBot({ name: 'sequential bench', code })
  const chat = await ChatClient.connect({ apiUrl: bot.integrations.chat.webhookUrl })
  const { conversation } = await chat.createConversation({})
  const listener = await chat.listenConversation({ id: conversation.id })
  let waiting = null
  listener.on('message_created', (m) => {
    if (m.isBot && waiting && m.payload.text === waiting.text) {
      const w = waiting
      waiting = null
      w.resolve()
    }
  })
  listener.on('error', (err) => {
    console.error('listener error:', err)
    process.exitCode = 1
  })
  const lat = []
  for (let i = 0; i < warmup + rounds; i++) {
    const text = 'm' + i
    const replied = new Promise((resolve) => (waiting = { text, resolve }))
    const start = process.hrtime.bigint()
    await chat.createMessage({ conversationId: conversation.id, payload: { type: 'text', text } })
    await replied
    if (i >= warmup) lat.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  await listener.disconnect()
  listener.cleanup()
  lat.sort((a, b) => a - b)
  const at = (p) => lat[Math.floor((lat.length - 1) * p)].toFixed(2)
  const slow = lat.filter((x) => x > 100).length
  console.log(`${rounds} sequential round trips: p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms, ${slow} over 100 ms`)
} finally {
  await server.stop()
}

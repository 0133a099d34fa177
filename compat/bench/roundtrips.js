// Sequential round trips through the official chat client: one user, one
// message at a time, each sent when the bot's reply to the previous one has
// arrived on the conversation's signal stream. Shared by the benchmarks.

import fs from 'node:fs'
import { Client as ChatClient } from '@botpress/chat'

/**
 * Sends warmup + rounds messages ("<prefix><i>") to the bot at webhookUrl,
 * each after the reply (the same text, from the bot) to the one before.
 * Returns the round trips' latencies in ms after the warm-up, sorted, with
 * two more sorted arrays as properties: `request`, the time createMessage
 * took, and `reply`, the time from its response to the reply's signal.
 */
export async function roundTrips(webhookUrl, { rounds, warmup, prefix = 'm' }) {
  const chat = await ChatClient.connect({ apiUrl: webhookUrl })
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
  const request = []
  const reply = []
  try {
    for (let i = 0; i < warmup + rounds; i++) {
      const text = prefix + i
      let timer
      const replied = new Promise((resolve, reject) => {
        waiting = { text, resolve }
        timer = setTimeout(() => reject(new Error(`no reply to ${text} within 30 s`)), 30_000)
      })
      const start = process.hrtime.bigint()
      await chat.createMessage({ conversationId: conversation.id, payload: { type: 'text', text } })
      const sent = process.hrtime.bigint()
      await replied.finally(() => clearTimeout(timer))
      const end = process.hrtime.bigint()
      if (i >= warmup) {
        lat.push(Number(end - start) / 1e6)
        request.push(Number(sent - start) / 1e6)
        reply.push(Number(end - sent) / 1e6)
      }
    }
  } finally {
    await listener.disconnect()
    listener.cleanup()
  }
  const sorted = (xs) => xs.sort((a, b) => a - b)
  return Object.assign(sorted(lat), { request: sorted(request), reply: sorted(reply) })
}

/** "p50 … ms, p99 … ms, max … ms" of sorted latencies. */
export function summary(lat) {
  const at = (p) => lat[Math.floor((lat.length - 1) * p)].toFixed(2)
  return `p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms`
}

/**
 * CPU time (ms) used so far by the process pid and, separately, by its children (each with its own
 * descendants), read from /proc; null where there is no /proc. Assumes 100 clock ticks a second.
 */
export function processCPU(pid) {
  if (!fs.existsSync(`/proc/${pid}/stat`)) return null
  const own = (p) => {
    try {
      const f = fs.readFileSync(`/proc/${p}/stat`, 'utf8').split(') ')[1].split(' ')
      return (Number(f[11]) + Number(f[12])) * 10
    } catch {
      return 0 // exited since it was listed
    }
  }
  const children = (p) => {
    let tids = []
    try {
      tids = fs.readdirSync(`/proc/${p}/task`)
    } catch {}
    return tids.flatMap((t) => {
      try {
        return fs.readFileSync(`/proc/${p}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean)
      } catch {
        return []
      }
    })
  }
  const tree = (p) => own(p) + children(p).reduce((s, c) => s + tree(c), 0)
  return { self: own(pid), children: children(pid).reduce((s, c) => s + tree(c), 0) }
}

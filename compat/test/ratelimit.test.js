// Rate limits with the official @botpress/client 1.45.0 (docs/limits.md,
// compat-notes §2.1): a limited call fails with RateLimitedError, and a
// client created with `retry` (axios-retry) waits for Retry-After and gets
// through on an idempotent call; POST is never retried.
//
// The token is limited to one request per 3 s, so consecutive calls are
// refused unless the machine stalls for seconds; each check starts by
// spending the bucket (until a refusal is seen) and tries again when a
// stall let the bucket refill, so no assertion rests on timing.

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client, RateLimitedError, isApiError } from '@botpress/client'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const PERIOD_S = 3
const ATTEMPTS = 5 // a stall of PERIOD_S between two calls, this many times, fails the test
const TEST_TIMEOUT_MS = 120_000

let server
let bot

before(async () => {
  server = await startServer({ args: ['--rate-limit-token', `1/${PERIOD_S}s`] })
  // The token's first call: its bucket is full.
  ;({ bot } = await new Client(options()).createBot({ name: 'rate limited' }))
})

after(async () => {
  await server?.stop()
})

const options = () => ({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })

/** A raw getBot, for the headers the client does not expose. */
async function rawGetBot(id) {
  const res = await fetch(new URL(`/v1/admin/bots/${encodeURIComponent(id)}`, server.apiUrl), {
    headers: { Authorization: `Bearer ${server.token}`, 'x-workspace-id': server.workspaceId },
  })
  return { res, body: await res.json() }
}

/** Spends the token's bucket: calls until one is refused, and returns that answer. */
async function exhaust(id) {
  for (let i = 0; i < 50; i++) {
    const r = await rawGetBot(id)
    if (r.res.status === 429) return r
    assert.equal(r.res.status, 200, `getBot: ${JSON.stringify(r.body)}`)
  }
  assert.fail('50 calls in a row were allowed: the limit is not applied')
}

/** Runs check right after exhausting the bucket until it reports it saw the limit. */
async function whileLimited(check) {
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    await exhaust(bot.id)
    if (await check()) return
  }
  assert.fail(`the limit was never met in ${ATTEMPTS} attempts`)
}

describe('rate limits with the official client', { timeout: TEST_TIMEOUT_MS }, () => {
  test('a refusal is 429 RateLimited with Retry-After and RateLimit-* headers', async () => {
    const { res, body } = await exhaust(bot.id)
    const retryAfter = Number(res.headers.get('retry-after'))
    assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= PERIOD_S, `Retry-After ${res.headers.get('retry-after')}`)
    assert.equal(res.headers.get('ratelimit-limit'), '1')
    assert.equal(res.headers.get('ratelimit-remaining'), '0')
    const reset = Number(res.headers.get('ratelimit-reset'))
    assert.ok(Number.isInteger(reset) && reset >= 1 && reset <= PERIOD_S, `RateLimit-Reset ${res.headers.get('ratelimit-reset')}`)
    assert.equal(body.code, 429)
    assert.equal(body.type, 'RateLimited')
    assert.match(body.message, /too many requests for this token/)
    assert.match(body.id, /^err_/)
  })

  test('without retry, the client throws RateLimitedError', async () => {
    const client = new Client(options())
    await whileLimited(async () => {
      try {
        await client.getBot({ id: bot.id })
        return false // the bucket refilled meanwhile
      } catch (err) {
        assert.ok(isApiError(err), `expected an API error, got ${err?.stack ?? err}`)
        assert.ok(err instanceof RateLimitedError, `expected RateLimitedError, got type=${err.type}: ${err.message}`)
        assert.equal(err.type, 'RateLimited')
        assert.match(err.message, /token/)
        return true
      }
    })
  })

  test('with retry, getBot waits for Retry-After and succeeds', async () => {
    const retries = []
    const client = new Client({
      ...options(),
      retry: {
        retries: 3,
        onRetry: (count, err) => {
          retries.push({ at: Date.now(), status: err.response?.status, retryAfter: Number(err.response?.headers?.['retry-after']) })
        },
      },
    })
    await whileLimited(async () => {
      retries.length = 0
      const { bot: got } = await client.getBot({ id: bot.id })
      const done = Date.now()
      assert.equal(got.id, bot.id)
      if (retries.length === 0) return false // passed first time: the bucket refilled meanwhile
      for (const r of retries) {
        assert.equal(r.status, 429)
        assert.ok(Number.isInteger(r.retryAfter) && r.retryAfter >= 1, `Retry-After ${r.retryAfter}`)
      }
      // The client waited at least Retry-After before its last attempt.
      const last = retries[retries.length - 1]
      assert.ok(done - last.at >= last.retryAfter * 1000 - 50, `retried after ${done - last.at} ms, Retry-After ${last.retryAfter} s`)
      return true
    })
  })

  test('with retry, listBots gets through too', async () => {
    let retried = 0
    const client = new Client({ ...options(), retry: { retries: 3, onRetry: () => retried++ } })
    await whileLimited(async () => {
      retried = 0
      const { bots } = await client.listBots({})
      assert.ok(bots.some((b) => b.id === bot.id))
      return retried > 0
    })
  })

  test('with retry, a POST is not retried: it fails with RateLimitedError', async () => {
    let retried = 0
    const client = new Client({ ...options(), retry: { retries: 3, onRetry: () => retried++ } })
    await whileLimited(async () => {
      try {
        await client.createBot({ name: 'not retried' })
        return false
      } catch (err) {
        assert.ok(err instanceof RateLimitedError, `expected RateLimitedError, got ${err?.stack ?? err}`)
        assert.equal(retried, 0)
        return true
      }
    })
  })
})

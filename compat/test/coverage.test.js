// docs/api-coverage.md against @botpress/client: every operation of the
// client has a row there, and what the rows say is true of the server: an
// operation marked done has a route, one marked "not yet" has none.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const doc = fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), '../../docs/api-coverage.md'), 'utf8')

// rows maps each operation named in a table's first column to its status.
function rows() {
  const out = new Map()
  for (const line of doc.split('\n')) {
    const cells = line.split('|').map((c) => c.trim())
    if (cells.length < 4 || cells[1] === '' || cells[1].startsWith('---') || cells[1] === 'operation') continue
    const status = cells[cells.length - 2]
    for (const raw of cells[1].split(',')) {
      const m = raw.trim().match(/^([a-z][A-Za-z0-9]*)(?:\/([a-z][A-Za-z0-9]*))?/)
      if (!m) continue
      // get/setAccountPreference names two operations.
      if (m[2]) {
        const stem = m[2].replace(/^[a-z]+/, '')
        out.set(m[1] + stem, status)
        out.set(m[2], status)
      } else {
        out.set(m[1], status)
      }
    }
  }
  return out
}

const operations = Object.keys(new Client({ apiUrl: 'http://127.0.0.1:1' }))
  .filter((k) => typeof new Client({ apiUrl: 'http://127.0.0.1:1' })[k] === 'function' && k !== 'axiosInstance')
  .sort()

// Operations the client builds from others (or that need real content);
// their parts have rows of their own.
const composite = new Set(['uploadFile'])

// Operations not built yet whose request reaches another operation's route
// (its path is a value of that route's parameter): GET /workspaces/public is
// getWorkspace of a workspace "public", GET /integrations/iaks getIntegration
// of an integration "iaks", GET /plugins/{id}/dereferenced getPluginByName of version
// "dereferenced" (and the hub's alike). Their rows are checked to exist only.
const shadowed = new Set(['listPublicWorkspaces', 'getMultipleUsages', 'listIntegrationApiKeys',
  'getDereferencedPlugin', 'getDereferencedPublicPluginById'])

let server, client

before(async () => {
  server = await startServer()
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId, botId: 'bot_none' })
})

after(async () => {
  await server?.stop()
})

test('every operation of @botpress/client has a row in docs/api-coverage.md', () => {
  const known = rows()
  const missing = operations.filter((op) => !known.has(op))
  assert.deepEqual(missing, [], `operations without a row: ${missing.join(', ')}`)
})

test('the rows are true: done operations are routed, "not yet" ones are not', async () => {
  const known = rows()
  const x = 'x_1'
  const input = { id: x, table: x, type: 'conversation', name: x, key: x, botId: x, userId: x, conversationId: x, sourceTableId: x,
    integrationId: x, interfaceId: x, pluginId: x, version: x, idOrKey: x, destinationKey: x, messageId: x, workspaceId: x, issueId: x,
    handle: x, startDate: '2026-01-01T00:00:00Z', endDate: '2026-01-02T00:00:00Z', timeStart: '2026-01-01T00:00:00Z' }
  const wrong = []
  for (const op of operations) {
    if (composite.has(op) || shadowed.has(op)) continue
    const status = known.get(op) ?? ''
    const done = status.startsWith('done')
    let routed
    try {
      await client[op]({ ...input })
      routed = true
    } catch (err) {
      if (err?.type === undefined) continue // refused by the client itself: nothing reached the server
      routed = !(err.type === 'ResourceNotFound' && /^no route for /.test(err.message)) && err.type !== 'MethodNotFound'
    }
    if (routed !== done) wrong.push(`${op} (${status || 'no row'}): ${routed ? 'routed' : 'not routed'}`)
  }
  assert.deepEqual(wrong, [], `rows that are not true:\n${wrong.join('\n')}`)
})

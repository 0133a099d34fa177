// Every official body field is accepted: for each operation of the official
// definition (@botpress/api, with the fields @botpress/client 1.45.0 sends on
// top of it) that the server routes (its /openapi.json), a body with each
// top-level field set to a valid value, alone and all at once, is never
// refused as an unknown property. On SQLite and on PostgreSQL.

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import { createRequire } from 'node:module'
import { Client } from '@botpress/client'
import { startServer, backends } from '../support/server.js'

const require = createRequire(import.meta.url)
const api = require('@botpress/api')

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const SECTIONS = ['runtime', 'files', 'tables', 'admin']

// Values for the fields @botpress/client sends that the definition lacks
// (its generated code is newer); a field missing here fails the test.
const CLIENT_ONLY = {
  properties: { shared: 'yes' },
  attributes: { plan: 'pro' },
  expiry: 60_000,
  secrets: { API_KEY: 'secret' },
  type: 'studio',
  maxExecutionTime: 60,
  billingVersion: 'v4',
  sendEmail: false,
  message: 'a note',
}

// clientBodyKeys maps each operation to the body keys @botpress/client
// sends for it: every input key is given, and a scratch server records
// which of them the request body carries.
async function clientBodyKeys(ops) {
  let last
  const srv = http.createServer((req, res) => {
    let b = ''
    req.on('data', (c) => (b += c))
    req.on('end', () => {
      last = b ? JSON.parse(b) : {}
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const client = new Client({ apiUrl: `http://127.0.0.1:${srv.address().port}`, token: 't', botId: 'b', workspaceId: 'w' })
  const input = new Proxy({}, { get: (_, k) => (typeof k === 'string' && k !== 'then' && k !== 'toJSON' ? 'x' : undefined) })
  const out = new Map()
  try {
    for (const name of ops) {
      if (typeof client[name] !== 'function') continue
      last = undefined
      await client[name](input).catch(() => {})
      out.set(name, Object.keys(last ?? {}))
    }
  } finally {
    srv.close()
  }
  return out
}

// value is a valid value of the JSON Schema s for a field named name:
// known names get the ids of the resources made in before().
function value(s, name, ids) {
  if (ids[name] !== undefined) return ids[name]
  if (s.enum) return s.enum[0]
  const type = Array.isArray(s.type) ? s.type.find((t) => t !== 'null') : s.type
  switch (type) {
    case 'string': {
      if (s.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString()
      if (s.format === 'email') return `member-${Math.random().toString(36).slice(2, 8)}@example.test`
      if (s.pattern) return 'h4handle'
      if (/url|picture|website/i.test(name)) return 'https://example.test/p.png'
      const len = Math.min(Math.max(s.minLength ?? 1, 8), s.maxLength ?? 8)
      return 'v'.repeat(len)
    }
    case 'number':
    case 'integer':
      return s.minimum ?? Math.min(1, s.maximum ?? 1)
    case 'boolean':
      return false
    case 'array': {
      const n = Math.max(s.minItems ?? 0, 1)
      return Array.from({ length: Math.min(n, s.maxItems ?? n) }, () => value(s.items ?? {}, name, ids))
    }
    case 'object': {
      const o = {}
      for (const k of s.required ?? []) o[k] = value(s.properties[k], k, ids)
      if (Object.keys(o).length === 0 && s.additionalProperties && typeof s.additionalProperties === 'object') {
        o.k = value(s.additionalProperties, 'k', ids)
      }
      return o
    }
    default:
      return 'v'
  }
}

// path fills the path parameters of an operation with the resources of
// before(): what the server reads the body of.
function path(template, ids) {
  const params = [
    ['/v1/chat/conversations/{id}', ids.conversationId],
    ['/v1/chat/messages/{id}', ids.messageId],
    ['/v1/chat/users/{id}', ids.userId],
    ['/v1/chat/workflows/{id}', ids.workflowId],
    ['/v1/admin/bots/{id}', ids.botId],
    ['/v1/admin/workspaces/{id}', ids.workspaceId],
    ['/v1/admin/workspace-members/{id}', ids.memberId],
    ['/v1/files/knowledge-bases/{id}', ids.kbId],
    ['/v1/files/{id}', ids.fileId],
  ]
  const hit = params.find(([prefix]) => template.startsWith(prefix))
  const p = hit ? hit[0].replace('{id}', encodeURIComponent(hit[1])) + template.slice(hit[0].length) : template
  return p
    .replace('{type}/{id}/{name}', `bot/${ids.botId}/progress`)
    .replace('{idOrKey}', encodeURIComponent(ids.fileKey))
    .replace('{destinationKey}', 'copied.txt')
    .replace('{table}', ids.table)
    .replace('{sourceTableId}', ids.table)
}

for (const backend of backends()) {
  describe(`official body fields (${backend})`, () => {
    let server, ids, routed, clientKeys

    const call = async (op, body) => {
      const res = await fetch(server.apiUrl + path(op.path, ids), {
        method: op.method.toUpperCase(),
        headers: {
          Authorization: `Bearer ${server.token}`,
          'x-bot-id': ids.botId,
          'x-workspace-id': server.workspaceId,
          'Content-Type': 'application/json',
        },
        body: JSON.stringify(body),
      })
      const text = await res.text()
      return { status: res.status, text }
    }

    before(async () => {
      server = await startServer({ backend })
      const admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
      const { bot } = await admin.createBot({ name: 'bodies' })
      const rt = new Client({ apiUrl: server.apiUrl, token: server.token, botId: bot.id, workspaceId: server.workspaceId })
      const { user } = await rt.createUser({ tags: {} })
      const { conversation } = await rt.createConversation({ channel: 'web', tags: {} })
      const { message } = await rt.createMessage({ conversationId: conversation.id, userId: bot.id, type: 'text', payload: { text: 'hi' }, tags: {} })
      const { event } = await rt.createEvent({ type: 'custom', payload: {} })
      const { workflow } = await rt.createWorkflow({ name: 'flow', status: 'listening' })
      const { file } = await rt.upsertFile({ key: 'bodies.txt', size: 2 })
      const { knowledgeBase } = await rt.createKnowledgeBase({ name: 'kb' })
      await rt.createTable({ name: 'BodiesTable', schema: { type: 'object', properties: { name: { type: 'string' } } } })
      const { id: memberId } = await admin.createWorkspaceMember({ email: 'bodies@example.test', role: 'viewer' })
      const { version } = await admin.createBotVersion({ id: bot.id, name: 'v1' })
      ids = {
        botId: bot.id, userId: user.id, conversationId: conversation.id, messageId: message.id, eventId: event.id,
        workflowId: workflow.id, parentWorkflowId: workflow.id, fileId: file.id, fileKey: file.key, kbId: knowledgeBase.id,
        table: 'BodiesTable', workspaceId: server.workspaceId, memberId, versionId: version.id,
        payload: { text: 'hi' }, type: 'text', integrationName: 'chat',
      }
      const doc = await (await fetch(server.apiUrl + '/openapi.json')).json()
      const served = new Set(Object.values(doc.paths).flatMap((ms) => Object.values(ms).map((o) => o.operationId)))
      routed = SECTIONS.flatMap((sec) => Object.entries(api[sec].state.operations).map(([name, op]) => ({ sec, name, op })))
        .filter(({ name, op }) => served.has(name) && op.requestBody)
      clientKeys = await clientBodyKeys(routed.map((r) => r.name))
    })

    after(async () => {
      await server?.stop()
    })

    test('no routed operation refuses an official body field', async () => {
      assert.ok(routed.length > 40, `only ${routed.length} routed operations with a body`)
      const refused = []
      for (const { name, op } of routed) {
        const schema = op.requestBody.schema
        const fields = { ...schema.properties }
        for (const k of clientKeys.get(name) ?? []) {
          if (fields[k]) continue
          assert.ok(k in CLIENT_ONLY, `${name}: @botpress/client sends ${k}, which has no value in CLIENT_ONLY`)
          fields[k] = { const: CLIENT_ONLY[k] }
        }
        const val = (k) => (fields[k].const !== undefined ? fields[k].const : value(fields[k], k, ids))
        const required = Object.fromEntries((schema.required ?? []).map((k) => [k, val(k)]))

        // The body is checked at this path: an unknown field is refused there.
        const control = await call(op, { ...required, zzUnknown: 1 })
        if (!(control.status === 400 && /zzUnknown: unknown property/.test(control.text))) {
          refused.push(`${name}: the body check is not reached (${control.status} ${control.text})`)
          continue
        }
        const bodies = Object.keys(fields).map((k) => [k, { ...required, [k]: val(k) }])
        bodies.push(['(all)', Object.fromEntries(Object.keys(fields).map((k) => [k, val(k)]))])
        for (const [k, body] of bodies) {
          const { status, text } = await call(op, body)
          if (status === 400 && /unknown property/.test(text)) refused.push(`${name} ${k}: ${text}`)
        }
      }
      assert.deepEqual(refused, [], `refused:\n${refused.join('\n')}`)
    })
  })
}

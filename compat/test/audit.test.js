// The audit log through the official @botpress/client: getAuditRecords
// pages a workspace's records newest first, the actions the client's type
// names, who acted, never a secret; administrators only (docs/data.md#audit-log).

import { describe, test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client, isApiError, ForbiddenError, InvalidQueryError } from '@botpress/client'
import { startServer, backends } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

// The actions of the client's type (GetAuditRecordsResponse).
const ACTIONS = [
  'UNKNOWN', 'ADD_WORKSPACE_MEMBER', 'REMOVE_WORKSPACE_MEMBER', 'UPDATE_WORKSPACE_MEMBER', 'CLOSE_WORKSPACE', 'CREATE_BOT',
  'CREATE_WORKSPACE', 'DELETE_BOT', 'DEPLOY_BOT', 'TRANSFER_BOT', 'DOWNLOAD_BOT_ARCHIVE', 'UPDATE_BOT', 'UPDATE_BOT_CHANNEL',
  'UPDATE_BOT_CONFIG', 'UPDATE_PAYMENT_METHOD', 'UPDATE_WORKSPACE', 'SET_SPENDING_LIMIT', 'SET_AI_SPENDING_LIMIT',
  'UPDATE_WORKSPACE_BILLING_READONLY', 'UPDATE_WORKSPACE_PLAN_READONLY', 'UPDATE_WORKSPACE_ADDONS_READONLY',
  'EXECUTE_AUTO_RECHARGE_SUCCESS', 'EXECUTE_AUTO_RECHARGE_FAILED',
]

async function allRecords(client, id, pageSize) {
  const out = []
  let nextToken
  for (let i = 0; i < 100; i++) {
    const res = await client.getAuditRecords({ id, nextToken, pageSize })
    assert.ok(res.records.length <= pageSize, `a page of ${res.records.length} records for pageSize ${pageSize}`)
    out.push(...res.records)
    nextToken = res.meta.nextToken
    if (!nextToken) return out
  }
  throw new Error('nextToken never ends')
}

async function rejectsWith(promise, ErrorClass, type, mention) {
  await assert.rejects(promise, (err) => {
    assert.ok(isApiError(err), `not an API error: ${err}`)
    assert.ok(err instanceof ErrorClass, `${err.constructor.name}, want ${ErrorClass.name}`)
    assert.equal(err.type, type)
    if (mention) assert.match(err.message, new RegExp(mention))
    return true
  })
}

for (const backend of backends()) {
  describe(`Audit log (${backend})`, () => {
    let server, owner, ws, email

    before(async () => {
      server = await startServer({ backend })
      // An account of its own: its token's records land only in its workspace.
      email = `auditor-${Date.now()}@example.com`
      const token = await server.issueToken(email)
      ws = (await new Client({ apiUrl: server.apiUrl, token }).createWorkspace({ name: 'Audited' })).id
      owner = new Client({ apiUrl: server.apiUrl, token, workspaceId: ws })
    })

    after(async () => {
      await server?.stop()
    })

    test('records every change, newest first, by who acted, with no secret', async () => {
      const secret = 'compat-s3cr3t-VALUE-4b1e'
      const { bot } = await owner.createBot({ name: 'audited', secrets: { TOKEN: secret } })
      await owner.updateBot({ id: bot.id, code: "bot.on.message('*', async () => {})" })
      const key = await owner.createBotApiKey({ botId: bot.id, note: 'compat' })
      const { pat } = await owner.createPersonalAccessToken({ note: 'compat' })
      const member = await owner.createWorkspaceMember({ email: `dev-${Date.now()}@example.com`, role: 'developer' })
      await owner.updateWorkspaceMember({ id: member.id, role: 'manager' })
      await owner.changeAISpendQuota({ monthlySpendingLimit: 3 })
      await owner.deleteBot({ id: bot.id })

      const records = await allRecords(owner, ws, 2)
      assert.deepEqual(
        records.map((r) => (r.action === 'UNKNOWN' ? `UNKNOWN:${r.value.split(':')[0]}` : r.action)),
        ['DELETE_BOT', 'SET_AI_SPENDING_LIMIT', 'UPDATE_WORKSPACE_MEMBER', 'ADD_WORKSPACE_MEMBER', 'UNKNOWN:CREATE_PERSONAL_ACCESS_TOKEN',
          'UNKNOWN:CREATE_BOT_API_KEY', 'DEPLOY_BOT', 'CREATE_BOT', 'CREATE_WORKSPACE']
      )
      const me = (await owner.getAccount({})).account
      for (const r of records) {
        assert.ok(ACTIONS.includes(r.action), `${r.action} is not an action of the client's type`)
        assert.match(r.id, /^audit_/)
        assert.ok(!Number.isNaN(Date.parse(r.recordedAt)), `recordedAt ${r.recordedAt}`)
        assert.equal(r.userId, me.id)
        assert.equal(r.userEmail, email)
      }
      assert.equal(records[0].resourceId, bot.id)
      assert.equal(records[0].resourceName, 'audited')
      const text = JSON.stringify(records)
      for (const s of [secret, key.value, pat.value, bot.signingSecret]) {
        assert.ok(!text.includes(s), `the audit log holds a secret value (${s.slice(0, 10)}…)`)
      }
    })

    test('only administrators and the owner read it; bad queries name their field', async () => {
      for (const role of ['viewer', 'developer', 'manager']) {
        const memberEmail = `${role}-${Date.now()}@example.com`
        await owner.createWorkspaceMember({ email: memberEmail, role })
        const member = new Client({ apiUrl: server.apiUrl, token: await server.issueToken(memberEmail), workspaceId: ws })
        await rejectsWith(member.getAuditRecords({ id: ws }), ForbiddenError, 'Forbidden', 'administrator')
      }
      const adminEmail = `admin-${Date.now()}@example.com`
      await owner.createWorkspaceMember({ email: adminEmail, role: 'administrator' })
      const admin = new Client({ apiUrl: server.apiUrl, token: await server.issueToken(adminEmail), workspaceId: ws })
      const { records } = await admin.getAuditRecords({ id: ws })
      assert.ok(records.some((r) => r.action === 'ADD_WORKSPACE_MEMBER' && r.resourceName === adminEmail))

      for (const pageSize of [0, 1001, 'abc']) {
        await rejectsWith(owner.getAuditRecords({ id: ws, pageSize }), InvalidQueryError, 'InvalidQuery', 'pageSize')
      }
      await rejectsWith(owner.getAuditRecords({ id: ws, nextToken: 'garbage' }), InvalidQueryError, 'InvalidQuery', 'nextToken')
      assert.ok((await owner.getAuditRecords({ id: ws, pageSize: 1000 })).records.length > 0)
    })
  })
}

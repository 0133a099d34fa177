#!/usr/bin/env node
// Stocks a botplatform server's hub with the interfaces @botpress/sdk
// defines (hitl, listable, llm, speechToText…), public, so that the
// integrations that implement them deploy with `bp deploy`
// (docs/integrations.md#interfaces).
//
// Run it in a directory where @botpress/sdk and @botpress/cli are installed
// (an integration project, or the monorepo's root), as the workspace that
// keeps the hub's interfaces:
//
//   node <botplatform>/scripts/stock-hub/interfaces.mjs --apiUrl http://localhost:8080 \
//     --token <personal access token> --workspaceId <workspace id>
//
// An interface already there (same name and version) is left as it is.

import { createRequire } from 'node:module'
import path from 'node:path'
import { parseArgs } from 'node:util'

const { values: opts } = parseArgs({
  options: { apiUrl: { type: 'string' }, token: { type: 'string' }, workspaceId: { type: 'string' } },
})
const apiUrl = (opts.apiUrl ?? process.env.BP_API_URL ?? '').replace(/\/+$/, '')
const token = opts.token ?? process.env.BP_TOKEN
const workspaceId = opts.workspaceId ?? process.env.BP_WORKSPACE_ID
if (!apiUrl || !token || !workspaceId) {
  console.error('usage: interfaces.mjs --apiUrl <server> --token <token> --workspaceId <id>')
  process.exit(2)
}

// The packages of the directory it runs in, as that project builds with them.
const require = createRequire(path.join(process.cwd(), 'package.json'))
let sdk, body
try {
  sdk = require('@botpress/sdk')
  body = require('@botpress/cli/dist/api/interface-body')
} catch (err) {
  console.error(`run it where @botpress/sdk and @botpress/cli are installed (${err.message})`)
  process.exit(2)
}

const headers = { authorization: `Bearer ${token}`, 'x-workspace-id': workspaceId, 'content-type': 'application/json' }
async function call(method, p, data) {
  const res = await fetch(apiUrl + p, { method, headers, body: data && JSON.stringify(data) })
  const text = await res.text()
  return { status: res.status, body: text ? JSON.parse(text) : {} }
}

let failed = false
for (const def of Object.values(sdk.interfaces ?? {})) {
  if (!def?.name || !def?.version) continue // not an interface (e.g. shared schemas)
  const found = await call('GET', `/v1/admin/interfaces/${encodeURIComponent(def.name)}/${encodeURIComponent(def.version)}`)
  if (found.status === 200) {
    console.log(`${def.name}@${def.version}: already there (${found.body.interface.id})`)
    continue
  }
  const res = await call('POST', '/v1/admin/interfaces', { ...body.prepareCreateInterfaceBody(def), public: true })
  if (res.status === 200) {
    console.log(`${def.name}@${def.version}: created (${res.body.interface.id})`)
  } else {
    failed = true
    console.error(`${def.name}@${def.version}: ${res.status} ${res.body.message ?? JSON.stringify(res.body)}`)
  }
}
process.exit(failed ? 1 : 0)

// Bot versions through the official @botpress/client 1.45.0:
// listBotVersions, createBotVersion, getBotVersion (its url fetched as the
// client's user would) and deployBotVersion rolling a bot back.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client, ResourceNotFoundError, InvalidPayloadError } from '@botpress/client'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

let server
let client

before(async () => {
  server = await startServer()
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
})

after(async () => {
  await server?.stop()
})

const codeOf = (word) => `bot.on.message('*', async ({ message, client }) => {
  await client.createMessage({ conversationId: message.conversationId, userId: message.userId, tags: {}, type: 'text', payload: { text: '${word}' } })
})
`

test('versions are recorded, downloaded and deployed back', async () => {
  const { bot } = await client.createBot({ name: 'versioned', code: codeOf('first'), secrets: { API_TOKEN: 'very-secret-9' } })
  await client.updateBot({ id: bot.id, code: codeOf('second') })

  let { versions } = await client.listBotVersions({ id: bot.id })
  assert.deepEqual(versions.map((v) => v.name), ['v2', 'v1'])
  for (const v of versions) {
    assert.equal(typeof v.id, 'string')
    assert.ok(!Number.isNaN(Date.parse(v.createdAt)), 'createdAt is a date')
  }

  const { version } = await client.createBotVersion({ id: bot.id, name: 'release-2', description: 'what runs now' })
  assert.equal(version.name, 'release-2')
  assert.equal(version.description, 'what runs now')
  ;({ versions } = await client.listBotVersions({ id: bot.id }))
  assert.deepEqual(versions.map((v) => v.name), ['release-2', 'v2', 'v1'])

  // The url is fetched without credentials; it holds the code, no secret.
  const { url } = await client.getBotVersion({ id: bot.id, versionId: versions[2].id })
  const res = await fetch(url)
  assert.equal(res.status, 200)
  const text = await res.text()
  assert.ok(!text.includes('very-secret-9') && !text.includes('API_TOKEN'), 'no secret in a version')
  const doc = JSON.parse(text)
  assert.equal(doc.bot.code, codeOf('first'))
  assert.equal(doc.id, versions[2].id)

  // deployBotVersion rolls the bot back; the secret stays.
  const deployed = await client.deployBotVersion({ id: bot.id, versionId: versions[2].id })
  assert.deepEqual(deployed, {})
  const { bot: after } = await client.getBot({ id: bot.id })
  assert.equal(after.secrets.length, 1)
  const again = await (await fetch((await client.getBotVersion({ id: bot.id, versionId: versions[2].id })).url)).json()
  assert.equal(again.digest, doc.digest)

  await assert.rejects(client.deployBotVersion({ id: bot.id, versionId: 'botver_nope' }), ResourceNotFoundError)
  await assert.rejects(client.getBotVersion({ id: bot.id, versionId: 'botver_nope' }), ResourceNotFoundError)
  await assert.rejects(client.createBotVersion({ id: bot.id, name: '' }), InvalidPayloadError)
  await assert.rejects(client.listBotVersions({ id: 'bot_nope' }), ResourceNotFoundError)
})

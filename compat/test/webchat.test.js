// The web chat through the official @botpress/client 1.45.0: getBotWebchat
// returns each kind of embed code, refuses an unknown kind naming `type`,
// and a bot's allowed origins are set with updateBot and read with getBot
// (docs/webchat.md).

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { Client, InvalidQueryError, InvalidPayloadError, ResourceNotFoundError } from '@botpress/client'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

let server, client, bot

before(async () => {
  server = await startServer()
  client = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  ;({ bot } = await client.createBot({ name: 'Shop assistant' }))
})

after(async () => {
  await server?.stop()
})

test('getBotWebchat returns the embed code of each type', async () => {
  const origin = new URL(server.apiUrl).origin
  const chatUrl = bot.integrations.chat.webhookUrl
  const codes = {}
  for (const type of ['preconfigured', 'configurable', 'fullscreen', 'sharableUrl']) {
    const res = await client.getBotWebchat({ id: bot.id, type })
    assert.deepEqual(Object.keys(res), ['code'])
    assert.equal(typeof res.code, 'string')
    codes[type] = res.code
  }
  const script = `${origin}/webchat/v1/inject.js`
  assert.equal(codes.preconfigured, `<script src="${script}" data-chat-url="${chatUrl}" data-bot-name="Shop assistant" defer></script>\n`)
  assert.match(codes.configurable, new RegExp(`<script src="${script}" defer></script>`))
  assert.match(codes.configurable, /window\.botplatformWebchat\.init\(\{/)
  assert.ok(codes.configurable.includes(`chatUrl: "${chatUrl}"`), codes.configurable)
  assert.match(codes.fullscreen, /^<!doctype html>/)
  assert.ok(codes.fullscreen.includes(`data-chat-url="${chatUrl}"`) && codes.fullscreen.includes('data-mode="fullscreen"'), codes.fullscreen)
  assert.equal(codes.sharableUrl, `${origin}/webchat/${bot.integrations.chat.webhookId}`)

  // The script and the page are there.
  const js = await fetch(script)
  assert.equal(js.status, 200)
  assert.equal(js.headers.get('access-control-allow-origin'), '*')
  const page = await fetch(codes.sharableUrl)
  assert.equal(page.status, 200)
  assert.match(await page.text(), /<title>Chat with Shop assistant<\/title>/)
})

test('getBotWebchat refuses an unknown type and an unknown bot', async () => {
  await assert.rejects(client.getBotWebchat({ id: bot.id, type: 'floating' }), (err) => {
    assert.ok(err instanceof InvalidQueryError, `${err}`)
    assert.match(err.message, /^type: must be one of preconfigured, configurable, fullscreen, sharableUrl/)
    return true
  })
  await assert.rejects(client.getBotWebchat({ id: 'bot_unknown', type: 'preconfigured' }), ResourceNotFoundError)
})

test('allowed origins are set with updateBot and shown by getBot', async () => {
  const chat = { configuration: { allowedOrigins: ['https://Shop.example.com/', 'http://localhost:3000'] } }
  const { bot: updated } = await client.updateBot({ id: bot.id, integrations: { chat } })
  assert.deepEqual(updated.integrations.chat.configuration.allowedOrigins, ['https://shop.example.com', 'http://localhost:3000'])
  const { bot: got } = await client.getBot({ id: bot.id })
  assert.deepEqual(got.integrations.chat.configuration.allowedOrigins, ['https://shop.example.com', 'http://localhost:3000'])
  assert.equal(got.integrations.chat.configuration.encryptionKey, bot.integrations.chat.configuration.encryptionKey)

  await assert.rejects(
    client.updateBot({ id: bot.id, integrations: { chat: { configuration: { allowedOrigins: ['https://shop.example.com/cart'] } } } }),
    (err) => {
      assert.ok(err instanceof InvalidPayloadError, `${err}`)
      assert.match(err.message, /^integrations\.chat\.configuration\.allowedOrigins\[0\]: /)
      return true
    }
  )

  // A browser page of an allowed origin gets the CORS headers; another none.
  const preflight = (origin) =>
    fetch(`${bot.integrations.chat.webhookUrl}/users`, {
      method: 'OPTIONS',
      headers: { Origin: origin, 'Access-Control-Request-Method': 'POST', 'Access-Control-Request-Headers': 'content-type' },
    })
  const ok = await preflight('https://shop.example.com')
  assert.equal(ok.status, 204)
  assert.equal(ok.headers.get('access-control-allow-origin'), 'https://shop.example.com')
  const refused = await preflight('https://elsewhere.example')
  assert.equal(refused.status, 403)
  assert.equal(refused.headers.get('access-control-allow-origin'), null)
})

// The official web chat in a browser: a page of another origin renders the
// React component of @botpress/webchat 4.5.2, unchanged (bundled from the
// npm package by compat/webchat-page), pointed at a bot's Chat API on this
// server, and headless Chromium uses it as a visitor would
// (docs/webchat.md#the-official-web-chat-in-a-page).
//
// Needs Chromium (BOTPLATFORM_CHROMIUM, else chromium on the PATH) and
// compat/webchat-page's packages (`make test-compat` installs them).

import { test, describe, before, after } from 'node:test'
import assert from 'node:assert/strict'
import http from 'node:http'
import fs from 'node:fs'
import path from 'node:path'
import zlib from 'node:zlib'
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Client } from '@botpress/client'
import { startServer } from '../support/server.js'

for (const k of Object.keys(process.env)) {
  if (k.startsWith('BP_')) delete process.env[k]
}

const here = path.dirname(fileURLToPath(import.meta.url))
const pageDir = path.join(here, '..', 'webchat-page')
const WAIT_MS = 60_000 // a hang guard
const ARTIFACTS = process.env.BOTPLATFORM_ARTIFACTS

function chromiumPath() {
  if (process.env.BOTPLATFORM_CHROMIUM) return process.env.BOTPLATFORM_CHROMIUM
  for (const name of ['chromium', 'chromium-browser', 'google-chrome']) {
    try {
      return execFileSync('which', [name], { encoding: 'utf8' }).trim()
    } catch {}
  }
  throw new Error('no Chromium: install Debian\'s chromium or set BOTPLATFORM_CHROMIUM')
}

// The bot greets a new conversation and echoes; to "typing" it only shows
// that it is writing.
const code = `bot.on.event('custom', async ({ event, client }) => {
  if (event.payload?.type === 'conversation_started' && event.payload.data?.status?.isInitial) {
    await client.createMessage({ conversationId: event.conversationId, payload: { type: 'text', text: 'Welcome to the shop!' } })
  }
})
bot.on.message('*', async ({ message, client }) => {
  const what = message.payload.type === 'text' ? message.payload.text : message.payload.type
  if (what === 'typing') {
    await client.callAction({ type: 'chat:startTypingIndicator', input: { conversationId: message.conversationId, messageId: message.id, timeout: 30000 } })
    return
  }
  await client.createMessage({ conversationId: message.conversationId, payload: { type: 'text', text: 'You said: ' + what } })
})
`

// squarePNG is a size × size PNG of one colour.
function squarePNG(size, [r, g, b]) {
  const crc = (buf) => {
    let c = ~0
    for (const x of buf) {
      c ^= x
      for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1))
    }
    return ~c >>> 0
  }
  const chunk = (type, data) => {
    const out = Buffer.alloc(12 + data.length)
    out.writeUInt32BE(data.length, 0)
    out.write(type, 4, 'ascii')
    data.copy(out, 8)
    out.writeUInt32BE(crc(out.subarray(4, 8 + data.length)), 8 + data.length)
    return out
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(size, 0)
  ihdr.writeUInt32BE(size, 4)
  ihdr.set([8, 2, 0, 0, 0], 8) // 8 bits, RGB
  const row = Buffer.concat([Buffer.from([0]), Buffer.alloc(size * 3).map((_, i) => [r, g, b][i % 3])])
  const idat = zlib.deflateSync(Buffer.concat(Array(size).fill(row)))
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', ihdr), chunk('IDAT', idat), chunk('IEND', Buffer.alloc(0))])
}

// A static server for the page: another origin than the bot's server.
function servePage(dir, embeds) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' }
  const srv = http.createServer((req, res) => {
    const embed = embeds.get(new URL(req.url, 'http://x').pathname)
    if (embed) {
      res.writeHead(200, { 'content-type': 'text/html' })
      res.end(`<!doctype html><html><head><meta charset="utf-8"><title>A shop</title></head><body><h1>A shop</h1>${embed}</body></html>`)
      return
    }
    const p = path.join(dir, path.normalize(new URL(req.url, 'http://x').pathname).replace(/^\/+/, '') || 'index.html')
    if (!p.startsWith(dir) || !fs.existsSync(p) || fs.statSync(p).isDirectory()) {
      res.writeHead(404).end()
      return
    }
    res.writeHead(200, { 'content-type': types[path.extname(p)] || 'application/octet-stream' })
    fs.createReadStream(p).pipe(res)
  })
  return new Promise((resolve) => srv.listen(0, '127.0.0.1', () => resolve(srv)))
}

describe('the official web chat in a browser', () => {
  let server, admin, bot, browser, page, pageSrv, origin, apiUrl, clientId, pageURL
  const embeds = new Map() // path on the page server → HTML the body holds
  const consoleLines = []

  before(async () => {
    const { buildPage } = await import(path.join(pageDir, 'build.mjs'))
    const dist = await buildPage()
    pageSrv = await servePage(dist, embeds)
    // Another origin than the server's: localhost rather than 127.0.0.1.
    origin = `http://localhost:${pageSrv.address().port}`
    server = await startServer()
    admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
    ;({ bot } = await admin.createBot({ name: 'Shop assistant', code }))
    await admin.updateBot({ id: bot.id, integrations: { chat: { configuration: { allowedOrigins: [origin] } } } })
    clientId = bot.integrations.chat.webhookId
    apiUrl = bot.integrations.chat.webhookUrl.slice(0, -(clientId.length + 1))
    pageURL = `${origin}/index.html?apiUrl=${encodeURIComponent(apiUrl)}&clientId=${clientId}`
    const { chromium } = await import(path.join(pageDir, 'node_modules', 'playwright-core', 'index.mjs'))
    browser = await chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox'] })
    page = await browser.newPage({ viewport: { width: 420, height: 720 } })
    page.on('console', (m) => consoleLines.push(`${m.type()}: ${m.text()}`))
    page.on('response', (r) => r.status() >= 400 && consoleLines.push(`response ${r.status()} ${r.request().method()} ${r.url()}`))
    page.on('requestfailed', (r) => consoleLines.push(`failed ${r.method()} ${r.url()}: ${r.failure()?.errorText}`))
    page.setDefaultTimeout(WAIT_MS)
  })

  after(async () => {
    await browser?.close()
    pageSrv?.close()
    await server?.stop()
  })

  const shot = async (name) => {
    if (ARTIFACTS) await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`) })
  }
  const seeText = (text) => page.getByText(text, { exact: false }).first().waitFor({ state: 'visible' })

  const within = async (what, f) => {
    const end = Date.now() + WAIT_MS
    for (;;) {
      const v = await f()
      if (v) return v
      if (Date.now() > end) throw new Error(`${what}: not within ${WAIT_MS} ms`)
      await new Promise((r) => setTimeout(r, 100))
    }
  }

  test('it opens, greets, answers, takes feedback and an image, shows the bot writing, finds the conversation again after a reload and a restart', async () => {
    try {
      await page.goto(pageURL)
      await seeText('Welcome to the shop!')
      await shot('official-greeting')

      const box = page.getByPlaceholder('Ask the shop')
      await box.fill('hello')
      await box.press('Enter')
      await seeText('You said: hello')

      // Thumbs up on the answer: the bot reads it in the message's tags.
      const answer = page.locator('[data-direction="incoming"]', { hasText: 'You said: hello' })
      await answer.locator('.bpMessageBlocksBubbleFeedbackIcon').first().click()
      const botClient = new Client({ apiUrl: server.apiUrl, token: server.token, botId: bot.id })
      await within('the feedback', async () => {
        const { messages } = await botClient.listMessages({ conversationId: (await botClient.listConversations({})).conversations[0].id })
        return messages.find((m) => m.tags['chat:feedback'] === 'positive')
      })

      // The bot writing.
      // The bot writing. The widget shows the same dots for a second after each message it sends: seen two seconds
      // on, they are the bot's (typing_started keeps them for five).
      await box.fill('typing')
      await box.press('Enter')
      const sent = Date.now()
      await within('the typing indicator', async () => Date.now() - sent > 2000 && (await page.locator('.bpTypingIndicatorContainer').first().isVisible()))
      await shot('official-typing')

      // An image from the visitor's disk: uploaded from the page, shown, answered.
      const png = squarePNG(96, [37, 99, 235])
      await page.locator('input[type="file"]').first().setInputFiles({ name: 'square.png', mimeType: 'image/png', buffer: png })
      await page.locator('.bpComposerFilePreviewImage').first().waitFor({ state: 'visible' }) // uploaded, waiting to be sent
      await page.locator('.bpComposerSendButton').first().click()
      await seeText('You said: image')
      const img = page.locator('[data-direction="outgoing"] img').first()
      await img.waitFor({ state: 'visible' })
      const src = await img.getAttribute('src')
      assert.match(src, /\/v1\/files\/public\/file_/)
      assert.deepEqual(Buffer.from(await (await fetch(src)).arrayBuffer()), png)
      await page.waitForTimeout(500) // the screenshot after the scroll's animation
      await shot('official-conversation')

      // A reload finds the same conversation.
      await page.reload()
      await seeText('You said: hello')
      assert.equal(await page.getByText('Welcome to the shop!').count(), 1, 'the same conversation, greeted once')

      // The server restarts under the open page: the web chat reconnects.
      const dataDir = server.dataDir
      await server.stop({ keepData: true })
      server = await startServer({ dataDir, addr: new URL(server.apiUrl).host })
      await box.fill('after the restart')
      await box.press('Enter')
      await seeText('You said: after the restart')
    } catch (err) {
      await shot('failure')
      err.message += `\nbrowser console:\n${consoleLines.slice(-30).join('\n')}`
      throw err
    }
  })

  test('the official web chat served by this server, embedded with getBotWebchat\'s code: a bubble, then the chat', async () => {
    const res = await fetch(`${server.apiUrl}/v1/admin/bots/${bot.id}/webchat?type=preconfigured&widget=official`, {
      headers: { authorization: `Bearer ${server.token}`, 'x-workspace-id': server.workspaceId },
    })
    assert.equal(res.status, 200)
    const { code } = await res.json()
    assert.match(code, /\/webchat\/official\/v1\/inject\.js/)
    embeds.set('/embed.html', code)
    const p = await browser.newPage({ viewport: { width: 900, height: 760 } })
    const violations = []
    p.on('console', (m) => /Content Security Policy|Refused to/.test(m.text()) && violations.push(m.text()))
    p.setDefaultTimeout(WAIT_MS)
    try {
      await p.goto(`${origin}/embed.html`)
      await p.getByRole('button', { name: 'Chat with Shop assistant' }).click()
      const chat = p.frameLocator('iframe[title="Chat with Shop assistant"]')
      await chat.getByText('Welcome to the shop!').first().waitFor({ state: 'visible' })
      const box = chat.getByPlaceholder(/./).first()
      await box.fill('from the bubble')
      await box.press('Enter')
      await chat.getByText('You said: from the bubble').first().waitFor({ state: 'visible' })
      if (ARTIFACTS) await p.screenshot({ path: path.join(ARTIFACTS, 'official-bubble.png') })
      assert.deepEqual(violations, [], 'no Content-Security-Policy violation')

      // The licences of what the script holds are served beside it.
      const notices = await fetch(`${server.apiUrl}/webchat/official/v1/NOTICES.txt`)
      assert.equal(notices.status, 200)
      assert.match(await notices.text(), /@botpress\/webchat 4\.5\.2 \(MIT\)/)
    } finally {
      await p.close()
    }
  })

  test('a page of an origin the bot does not allow gets nothing', async () => {
    const { bot: other } = await admin.createBot({ name: 'Closed shop', code })
    const otherId = other.integrations.chat.webhookId
    const p = await browser.newPage()
    try {
      await p.goto(`${origin}/index.html?apiUrl=${encodeURIComponent(apiUrl)}&clientId=${otherId}`)
      await p.waitForTimeout(3000) // the widget tries; the browser keeps every answer from it
      assert.equal(await p.getByText('Welcome to the shop!').count(), 0)
      const botClient = new Client({ apiUrl: server.apiUrl, token: server.token, botId: other.id })
      assert.deepEqual((await botClient.listConversations({})).conversations, [])
    } finally {
      await p.close()
    }
  })
})

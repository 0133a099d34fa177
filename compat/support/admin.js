import { Client } from '@botpress/client'

// A raw Admin API request, for what the official client cannot send
// (setting quotas or a workspace's plan): the server's bootstrap token, the
// workspace header, a JSON body. Returns the response, its text and its
// JSON (undefined when the body is not JSON).
export async function adminFetch(server, path, { method = 'GET', body, workspaceId = server.workspaceId } = {}) {
  const res = await fetch(server.apiUrl + path, {
    method,
    headers: {
      Authorization: `Bearer ${server.token}`,
      'x-workspace-id': workspaceId,
      ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let json
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { res, text, json }
}

// A bot of the server's workspace and two official clients: admin (the
// bootstrap token, Admin API) and rt (a bot API key of the bot, the
// Runtime, Files and Tables APIs).
export async function newBot(server, name) {
  const admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
  const { bot } = await admin.createBot({ name })
  const key = await admin.createBotApiKey({ botId: bot.id })
  const rt = new Client({ apiUrl: server.apiUrl, token: key.value, botId: bot.id })
  return { admin, bot, rt }
}

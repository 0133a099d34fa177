// Calls to the server's public APIs, from this origin. The console has no
// API of its own: it can do what its token's role can, nothing more.
import { loadSession } from './session.js'

export class ApiError extends Error {
  constructor(status, body, text) {
    super((body && body.message) || text || 'HTTP ' + status)
    this.status = status
    this.type = (body && body.type) || ''
  }
}

// call sends one request. auth: 'session' adds the signed-in token and
// workspace; a session object adds that one's; null adds none.
export async function call(method, path, { body, query, headers = {}, auth = 'session', signal } = {}) {
  const url = new URL(path, location.origin)
  for (const [k, v] of Object.entries(query || {})) {
    if (v !== undefined && v !== null && v !== '') url.searchParams.set(k, v)
  }
  const h = { ...headers }
  const s = auth === 'session' ? loadSession() : auth
  if (s && s.token) h.Authorization = 'Bearer ' + s.token
  if (s && s.workspaceId) h['x-workspace-id'] = s.workspaceId
  if (body !== undefined) h['Content-Type'] = 'application/json'
  const res = await fetch(url, {
    method, headers: h, signal, credentials: 'omit', cache: 'no-store',
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  let data = null
  try {
    data = text ? JSON.parse(text) : null
  } catch {
    data = null
  }
  if (!res.ok) throw new ApiError(res.status, data, text)
  return data
}

export const admin = (method, path, opts) => call(method, '/v1/admin' + path, opts)

// chatPath is the path of a bot's Chat API (its webhook URL), called on this
// origin whatever host the server names in the URL.
export function chatPath(webhookUrl) {
  return new URL(webhookUrl, location.origin).pathname.replace(/\/$/, '')
}

// chat calls a bot's Chat API as the user of key.
export const chat = (base, key, method, path, opts = {}) =>
  call(method, base + path, { ...opts, auth: null, headers: key ? { 'x-user-key': key } : {} })

// listen reads a conversation's signals (Server-Sent Events) with fetch:
// EventSource cannot send the x-user-key header. onSignal gets each
// {type, data}; it returns when the stream ends or signal aborts.
export async function listen(base, key, conversationId, onSignal, signal) {
  const res = await fetch(base + '/conversations/' + conversationId + '/listen', {
    headers: { 'x-user-key': key, Accept: 'text/event-stream' }, signal, credentials: 'omit', cache: 'no-store',
  })
  return readSignals(res, onSignal)
}

// watch reads the signals of one of a bot's conversations as the signed-in
// member (this server's watchBotConversation), as listen does for a user.
// onOpen is called once the stream is open.
export async function watch(botId, conversationId, onSignal, signal, onOpen) {
  const s = loadSession()
  const res = await fetch('/v1/admin/bots/' + encodeURIComponent(botId) + '/conversations/' + encodeURIComponent(conversationId) + '/listen', {
    headers: { Authorization: 'Bearer ' + s.token, 'x-workspace-id': s.workspaceId, Accept: 'text/event-stream' },
    signal, credentials: 'omit', cache: 'no-store',
  })
  return readSignals(res, onSignal, onOpen)
}

async function readSignals(res, onSignal, onOpen) {
  if (!res.ok || !res.body) {
    const text = await res.text()
    let data = null
    try {
      data = JSON.parse(text)
    } catch {
      data = null
    }
    throw new ApiError(res.status, data, text)
  }
  if (onOpen) onOpen()
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
  let buf = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buf += value
    let end
    while ((end = buf.indexOf('\n\n')) >= 0) {
      const frame = buf.slice(0, end)
      buf = buf.slice(end + 2)
      const data = frame.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n')
      if (!data || data === 'ping') continue
      try {
        onSignal(JSON.parse(data))
      } catch {
        // not a signal of ours
      }
    }
  }
}

// here is url's path and query on this origin: the server may name another
// host in the URLs it hands out (its configured public address).
export function here(url) {
  const u = new URL(url, location.origin)
  return u.pathname + u.search
}

// botCall calls an API that takes the bot in x-bot-id (the Files API, the
// Runtime API) with the signed-in token.
function botCall(prefix) {
  return (botId, method, path, opts = {}) => {
    const s = loadSession()
    return call(method, prefix + path, { ...opts, auth: { token: s && s.token }, headers: { ...opts.headers, 'x-bot-id': botId } })
  }
}

// files calls a bot's Files API; runtime its Runtime API.
export const files = botCall('/v1/files')
export const runtime = botCall('/v1/chat')

// upload sends a file's content to its uploadUrl (signed: no credentials)
// with XMLHttpRequest, which reports the upload's progress as fetch cannot.
// onProgress gets (bytes sent, bytes in all).
export function upload(uploadUrl, blob, contentType, onProgress) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest()
    xhr.open('PUT', here(uploadUrl))
    if (contentType) xhr.setRequestHeader('Content-Type', contentType)
    xhr.upload.onprogress = (e) => onProgress(e.loaded, e.lengthComputable ? e.total : blob.size)
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(blob.size, blob.size)
        resolve()
        return
      }
      let data = null
      try {
        data = JSON.parse(xhr.responseText)
      } catch {
        data = null
      }
      reject(new ApiError(xhr.status, data, xhr.responseText))
    }
    xhr.onerror = () => reject(new ApiError(0, null, 'the upload was cut off'))
    xhr.send(blob)
  })
}

// A bot's files (listFiles): key, status, size, tags.
import { html, useState, useEffect, ErrorText, when } from './ui.js'
import { call } from './api.js'
import { loadSession } from './session.js'
import { BotNav, useBot } from './botnav.js'

function size(n) {
  if (typeof n !== 'number') return ''
  const units = ['B', 'KB', 'MB', 'GB']
  let i = 0
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024
    i++
  }
  return (i ? n.toFixed(1) : n) + ' ' + units[i]
}

export function FilesPage({ botId }) {
  const { bot, error: botError } = useBot(botId)
  const [files, setFiles] = useState(null)
  const [error, setError] = useState(null)

  const reload = async () => {
    const s = loadSession()
    const out = []
    let nextToken
    do {
      const page = await call('GET', '/v1/files', { auth: { token: s.token }, headers: { 'x-bot-id': botId }, query: { nextToken } })
      out.push(...page.files)
      nextToken = page.meta && page.meta.nextToken
    } while (nextToken && out.length < 1000)
    setFiles(out)
  }
  useEffect(() => {
    document.title = 'Files · botplatform'
    reload().catch(setError)
  }, [botId])

  return html`
    <${BotNav} bot=${bot} botId=${botId} page="files" />
    <${ErrorText} error=${botError || error} />
    <section aria-labelledby="files-h">
      <div class="section-head">
        <h2 id="files-h">Files</h2>
        <button type="button" onClick=${() => reload().catch(setError)}>Refresh</button>
      </div>
      ${files === null ? html`<p class="muted">Loading…</p>` : files.length === 0 ? html`<p class="muted">No files.</p>` : html`
        <table class="list" id="files">
          <thead><tr><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Size</th><th scope="col">Tags</th><th scope="col">Updated</th></tr></thead>
          <tbody>
            ${files.map((f) => html`<tr key=${f.id}>
              <td><code>${f.key}</code></td>
              <td><span class=${'status st-' + f.status}>${f.status}</span>${f.failedStatusReason ? html`<div class="muted">${f.failedStatusReason}</div>` : ''}</td>
              <td>${size(f.size)}</td>
              <td>${Object.entries(f.tags || {}).map(([k, v]) => html`<span class="tag">${k}=${v}</span> `)}</td>
              <td>${when(f.updatedAt)}</td>
            </tr>`)}
          </tbody>
        </table>`}
    </section>`
}

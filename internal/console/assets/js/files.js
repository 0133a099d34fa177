// A bot's files: list (listFiles), filter by status and tag, and upload by
// drag and drop or a file picker (upsertFile, then the content to its
// uploadUrl) with a progress bar. The list refreshes itself while a file is
// being uploaded or indexed.
import { html, useState, useEffect, useRef, ErrorText, when, size } from './ui.js'
import { files as filesApi, upload } from './api.js'
import { BotNav, useBot } from './botnav.js'

const PENDING = new Set(['upload_pending', 'indexing_pending'])
const STATUSES = ['', 'upload_pending', 'upload_completed', 'upload_failed', 'indexing_pending', 'indexing_completed', 'indexing_failed']

// parseTags reads "k=v, k2=v2" into {k: v, k2: v2}.
export function parseTags(text) {
  const tags = {}
  for (const part of text.split(',')) {
    const i = part.indexOf('=')
    if (i <= 0) continue
    tags[part.slice(0, i).trim()] = part.slice(i + 1).trim()
  }
  return tags
}

export const filePath = (botId, fileId) => '#/bots/' + encodeURIComponent(botId) + '/files/' + encodeURIComponent(fileId)

async function listAll(botId, tags) {
  const out = []
  let nextToken
  const query = { pageSize: 100 }
  if (Object.keys(tags).length) query.tags = JSON.stringify(tags)
  do {
    const page = await filesApi(botId, 'GET', '', { query: { ...query, nextToken } })
    out.push(...page.files)
    nextToken = page.meta && page.meta.nextToken
  } while (nextToken && out.length < 1000)
  return out
}

// Upload is the drop zone, the picker and the options.
function Upload({ botId, onUploaded }) {
  const [index, setIndex] = useState(true)
  const [tags, setTags] = useState('')
  const [uploads, setUploads] = useState([])
  const [over, setOver] = useState(false)
  const picker = useRef()

  const update = (n, change) => setUploads((old) => old.map((u) => (u.n === n ? { ...u, ...change } : u)))
  const send = (list) => {
    for (const file of list) {
      const n = Math.random()
      setUploads((old) => [{ n, name: file.name, sent: 0, total: file.size, state: 'uploading' }, ...old].slice(0, 20))
      const body = { key: file.name, size: file.size, index, tags: parseTags(tags) }
      if (file.type) body.contentType = file.type
      filesApi(botId, 'PUT', '', { body })
        .then(({ file: f }) => {
          update(n, { id: f.id })
          onUploaded()
          return upload(f.uploadUrl, file, f.contentType, (sent, total) => update(n, { sent, total }))
        })
        .then(() => update(n, { state: 'uploaded' }), (error) => update(n, { state: 'failed', error }))
        .finally(onUploaded)
    }
  }
  const drop = (e) => {
    e.preventDefault()
    setOver(false)
    send([...e.dataTransfer.files])
  }
  return html`
    <div class=${'dropzone' + (over ? ' over' : '')} id="dropzone"
      onDragOver=${(e) => {
        e.preventDefault()
        setOver(true)
      }}
      onDragLeave=${() => setOver(false)} onDrop=${drop}>
      <p>Drop files here, or <button type="button" class="link" id="pick" onClick=${() => picker.current.click()}>choose files</button>.</p>
      <input type="file" multiple class="sr" id="file-input" ref=${picker} tabindex="-1" aria-hidden="true"
        onChange=${(e) => {
          send([...e.target.files])
          e.target.value = ''
        }} />
      <div class="options">
        <label class="check"><input type="checkbox" id="upload-index" checked=${index} onChange=${(e) => setIndex(e.target.checked)} /> index for search</label>
        <label for="upload-tags">Tags</label>
        <input id="upload-tags" value=${tags} placeholder="kind=faq, lang=en" onInput=${(e) => setTags(e.target.value)} />
      </div>
    </div>
    ${uploads.length > 0 && html`<ul class="uploads" id="uploads" aria-live="polite">
      ${uploads.map((u) => html`<li key=${u.n} class=${'up-' + u.state}>
        <code>${u.name}</code>
        <progress max=${u.total || 1} value=${u.sent} aria-label=${'Upload of ' + u.name}></progress>
        <span class="up-state">${u.state === 'uploading' ? Math.round((100 * u.sent) / (u.total || 1)) + ' %' : u.state}</span>
        ${u.error && html`<${ErrorText} error=${u.error} />`}
      </li>`)}
    </ul>`}`
}

export function FilesPage({ botId }) {
  const { bot, error: botError } = useBot(botId)
  const [files, setFiles] = useState(null)
  const [error, setError] = useState(null)
  const [status, setStatus] = useState('')
  const [tagFilter, setTagFilter] = useState('')
  const gen = useRef(0)

  const reload = () => {
    const g = ++gen.current
    return listAll(botId, parseTags(tagFilter)).then((fs) => {
      if (g !== gen.current) return
      setFiles(fs)
      setError(null)
    }, setError)
  }
  useEffect(() => {
    document.title = 'Files · botplatform'
    reload()
  }, [botId, tagFilter])

  // While a file is pending, look again every second.
  useEffect(() => {
    if (!files || !files.some((f) => PENDING.has(f.status))) return
    const t = setTimeout(reload, 1000)
    return () => clearTimeout(t)
  }, [files])

  const shown = files && files.filter((f) => !status || f.status === status)
  return html`
    <${BotNav} bot=${bot} botId=${botId} page="files" />
    <${ErrorText} error=${botError || error} />
    <section aria-labelledby="upload-h">
      <h2 id="upload-h" class="section-title">Upload</h2>
      <${Upload} botId=${botId} onUploaded=${reload} />
    </section>
    <section aria-labelledby="files-h">
      <div class="section-head">
        <h2 id="files-h">Files</h2>
        <label for="file-status">Status</label>
        <select id="file-status" value=${status} onChange=${(e) => setStatus(e.target.value)}>
          ${STATUSES.map((s) => html`<option value=${s}>${s || 'all'}</option>`)}
        </select>
        <label for="file-tags">Tags</label>
        <input id="file-tags" class="short" placeholder="kind=faq" value=${tagFilter} onChange=${(e) => setTagFilter(e.target.value)} />
        <button type="button" onClick=${reload}>Refresh</button>
      </div>
      ${shown === null ? html`<p class="muted">Loading…</p>` : shown.length === 0 ? html`<p class="muted">No files.</p>` : html`
        <table class="list" id="files">
          <thead><tr><th scope="col">Key</th><th scope="col">Status</th><th scope="col">Size</th><th scope="col">Tags</th><th scope="col">Updated</th></tr></thead>
          <tbody>
            ${shown.map((f) => html`<tr key=${f.id} data-key=${f.key}>
              <td><a href=${filePath(botId, f.id)}><code>${f.key}</code></a></td>
              <td><span class=${'status st-' + f.status}>${f.status}</span>${f.failedStatusReason ? html`<div class="muted">${f.failedStatusReason}</div>` : ''}</td>
              <td>${size(f.size)}</td>
              <td>${Object.entries(f.tags || {}).map(([k, v]) => html`<span class="tag">${k}=${v}</span> `)}</td>
              <td>${when(f.updatedAt)}</td>
            </tr>`)}
          </tbody>
        </table>`}
    </section>`
}

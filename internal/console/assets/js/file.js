// One file of a bot (getFile): its status, a download link (the file's
// signed url), delete, and its passages in order (listFilePassages) under
// the headings they sit in, with page numbers where the file has pages.
import { html, useState, useEffect, ErrorText, when, size, go, Confirm } from './ui.js'
import { files, here } from './api.js'
import { BotNav, useBot } from './botnav.js'

const HEADINGS = { title: 1, subtitle: 2 }

// withHeadings gives each passage the headings above it: a title starts a
// new path, a subtitle replaces the path's second part.
function withHeadings(passages) {
  let path = []
  return passages.map((p) => {
    const level = HEADINGS[p.meta && p.meta.subtype]
    if (level) {
      path = path.slice(0, level - 1).concat(p.content)
      return { ...p, heading: level, path: path.slice(0, -1) }
    }
    return { ...p, path }
  })
}

export function FilePage({ botId, fileId }) {
  const { bot, error: botError } = useBot(botId)
  const [file, setFile] = useState(null)
  const [passages, setPassages] = useState([])
  const [next, setNext] = useState(undefined)
  const [error, setError] = useState(null)
  const path = '/' + encodeURIComponent(fileId)

  const more = (token) =>
    files(botId, 'GET', path + '/passages', { query: { limit: 100, nextToken: token } }).then((r) => {
      setPassages((old) => (token ? old.concat(r.passages) : r.passages))
      setNext(r.meta && r.meta.nextToken)
    }, setError)

  useEffect(() => {
    let stopped = false
    let timer
    const load = () =>
      files(botId, 'GET', path).then(({ file: f }) => {
        if (stopped) return
        setFile(f)
        document.title = f.key + ' · botplatform'
        if (f.status === 'upload_pending' || f.status === 'indexing_pending') timer = setTimeout(load, 1000)
        else if (f.status === 'indexing_completed') more()
      }, setError)
    load()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, [botId, fileId])

  const remove = () =>
    files(botId, 'DELETE', path, { body: {} }).then(() => go('/bots/' + encodeURIComponent(botId) + '/files'), setError)

  const shown = withHeadings(passages)
  return html`
    <${BotNav} bot=${bot} botId=${botId} page="files" />
    <p class="crumbs"><a href=${'#/bots/' + encodeURIComponent(botId) + '/files'}>Files</a> /</p>
    <${ErrorText} error=${botError || error} id="file-error" />
    ${file && html`
      <div class="section-head">
        <h2 id="file-key"><code>${file.key}</code></h2>
        ${file.url && html`<a class="button" id="download" href=${here(file.url)} download=${file.key.split('/').pop()}>Download</a>`}
        <${Confirm} label="Delete" question=${'Delete ' + file.key + '?'} id="delete-file" onConfirm=${remove} />
      </div>
      <dl class="facts" id="file-facts">
        <dt>Status</dt><dd><span class=${'status st-' + file.status} id="file-status">${file.status}</span>${file.failedStatusReason && html` <span class="muted">${file.failedStatusReason}</span>`}</dd>
        <dt>Size</dt><dd>${size(file.size)}</dd>
        <dt>Type</dt><dd><code>${file.contentType}</code></dd>
        <dt>Tags</dt><dd>${Object.entries(file.tags || {}).map(([k, v]) => html`<span class="tag">${k}=${v}</span> `)}</dd>
        <dt>Updated</dt><dd>${when(file.updatedAt)}</dd>
      </dl>
      <section aria-labelledby="passages-h">
        <h2 id="passages-h" class="section-title">Passages</h2>
        ${file.status !== 'indexing_completed' ? html`<p class="muted">${file.status === 'indexing_pending' ? 'Being indexed…' : 'Not indexed.'}</p>` :
          passages.length === 0 ? html`<p class="muted">No passages.</p>` : html`
          <ol class="passages" id="passages">
            ${shown.map((p) => html`<li key=${p.id} class=${p.heading ? 'heading h' + p.heading : ''}>
              <div class="pmeta">
                <span class="pos">#${p.meta.position + 1}</span>
                ${p.meta.subtype && html`<span class="tag">${p.meta.subtype}</span>`}
                ${p.meta.pageNumber && html`<span class="page">page ${p.meta.pageNumber}</span>`}
                ${p.path.length > 0 && html`<span class="breadcrumb">${p.path.join(' › ')}</span>`}
              </div>
              <div class="ptext">${p.content}</div>
            </li>`)}
          </ol>
          ${next && html`<button type="button" id="more-passages" onClick=${() => more(next)}>More passages</button>`}`}
      </section>`}`
}

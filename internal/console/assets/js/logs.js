// A bot's logs, live: getBotLogs is polled every second for lines newer
// than the last one seen, and at once when nudge changes (a conversation's
// signal: its handling may have logged). They may be kept to a level, and
// to the lines holding a text.
import { html, useState, useEffect, useRef, ErrorText, when } from './ui.js'
import { admin } from './api.js'

const LEVELS = ['', 'debug', 'info', 'warn', 'error']
const WINDOW = 24 * 3600 * 1000 // what is shown on opening: the last day
const MAX = 500 // lines kept on the page

// logsHref is the address of a bot's logs (its code page) showing only the
// lines that hold filter: "[<alias>]" keeps to an integration's, since an
// installed integration's lines start with its alias in brackets.
export const logsHref = (botId, filter) =>
  '#/bots/' + encodeURIComponent(botId) + (filter ? '?' + new URLSearchParams({ q: filter }) : '')

const key = (l) => l.timestamp + '\u0000' + l.level + '\u0000' + l.message + '\u0000' + (l.conversationId || '')

// conversationId, when given, keeps to that conversation's lines.
// onLines, when given, is told the lines shown whenever they change.
// onFilter, when given, shows a field for a text the lines must hold
// (getBotLogs's messageContains, case-sensitive) and is told what is typed
// there; filter is that text, kept by the caller (in the page's address).
export function Logs({ botId, conversationId, nudge, onLines, filter = '', onFilter }) {
  const [level, setLevel] = useState('')
  const [lines, setLines] = useState([])
  const [error, setError] = useState(null)
  const [live, setLive] = useState(true)
  const list = useRef()
  const now = useRef(null) // polls at once, while live

  useEffect(() => {
    if (!live) return
    let stopped = false
    let since = new Date(Date.now() - WINDOW).toISOString()
    const seen = new Set()
    let timer
    setLines([])
    let running = false
    let again = false // a nudge came while polling: poll again at once
    const poll = async () => {
      if (running) {
        again = true
        return
      }
      running = true
      try {
        const fresh = []
        let nextToken
        do {
          const page = await admin('GET', '/bots/' + encodeURIComponent(botId) + '/logs', {
            query: { timeStart: since, level, conversationId, messageContains: filter, nextToken },
          })
          for (const l of page.logs) {
            const k = key(l)
            if (!seen.has(k)) {
              seen.add(k)
              fresh.push(l)
            }
          }
          nextToken = page.nextToken
        } while (nextToken && !stopped)
        if (stopped) return
        setError(null)
        if (fresh.length) {
          since = fresh[fresh.length - 1].timestamp // the same time again: lines of one instant are kept apart by seen
          setLines((old) => old.concat(fresh).slice(-MAX))
        }
      } catch (err) {
        if (!stopped) setError(err)
      }
      running = false
      if (!stopped) timer = setTimeout(poll, again ? 0 : 1000)
      again = false
    }
    now.current = () => {
      clearTimeout(timer)
      poll()
    }
    poll()
    return () => {
      stopped = true
      now.current = null
      clearTimeout(timer)
    }
  }, [botId, conversationId, level, filter, live])

  useEffect(() => {
    if (nudge && now.current) now.current()
  }, [nudge])

  useEffect(() => {
    const el = list.current
    if (el) el.scrollTop = el.scrollHeight
    if (onLines) onLines(lines)
  }, [lines])

  return html`
    <section aria-labelledby="logs-h" class="logs">
      <div class="section-head">
        <h2 id="logs-h">Logs</h2>
        <label for="log-level">Level</label>
        <select id="log-level" value=${level} onChange=${(e) => setLevel(e.target.value)}>
          ${LEVELS.map((l) => html`<option value=${l}>${l || 'all'}</option>`)}
        </select>
        ${onFilter && html`
          <label for="log-filter">Containing</label>
          <input id="log-filter" type="search" class="short" value=${filter} placeholder="[telegram]" spellcheck="false"
            onChange=${(e) => onFilter(e.target.value)} />`}
        <label class="check"><input type="checkbox" id="log-live" checked=${live} onChange=${(e) => setLive(e.target.checked)} /> live</label>
      </div>
      <${ErrorText} error=${error} />
      <ol class="loglines" id="logs" ref=${list} aria-live="polite">
        ${lines.length === 0 && html`<li class="muted">${filter ? 'No log lines hold “' + filter + '”.' : 'No log lines yet.'}</li>`}
        ${lines.map((l) => html`<li class=${'lvl-' + l.level}>
          <time datetime=${l.timestamp}>${when(l.timestamp)}</time>
          <span class="lvl">${l.level}</span>
          <span class="msg">${l.message}</span>
        </li>`)}
      </ol>
    </section>`
}

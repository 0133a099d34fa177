// A bot's conversations, through the Runtime API with the signed-in token
// (listConversations, listMessages, listEvents): the list, newest first,
// and one conversation live: its messages, the events the bot received and
// the log lines its handling wrote. The page follows the conversation's
// signals over this server's watchBotConversation (a member's token has no
// chat user's key for the Chat API's stream): each signal reloads the
// messages and events and reads the logs at once.
import { html, useState, useEffect, useRef, ErrorText, when } from './ui.js'
import { runtime, watch } from './api.js'
import { BotNav, useBot } from './botnav.js'
import { Logs } from './logs.js'

const convPath = (botId, id) => '#/bots/' + encodeURIComponent(botId) + '/conversations' + (id ? '/' + encodeURIComponent(id) : '')

export function ConversationsPage({ botId }) {
  const { bot, error: botError } = useBot(botId)
  const [convs, setConvs] = useState(null)
  const [next, setNext] = useState(undefined)
  const [error, setError] = useState(null)
  const more = (token) =>
    runtime(botId, 'GET', '/conversations', { query: { sortField: 'updatedAt', sortDirection: 'desc', nextToken: token } }).then((r) => {
      setConvs((old) => (token && old ? old.concat(r.conversations) : r.conversations))
      setNext(r.meta && r.meta.nextToken)
      setError(null)
    }, setError)
  useEffect(() => {
    document.title = 'Conversations · botplatform'
    more()
  }, [botId])
  return html`
    <${BotNav} bot=${bot} botId=${botId} page="conversations" />
    <${ErrorText} error=${botError || error} />
    <div class="section-head">
      <h2>Conversations</h2>
      <button type="button" onClick=${() => more()}>Refresh</button>
    </div>
    ${convs === null ? html`<p class="muted">Loading…</p>` : convs.length === 0 ? html`<p class="muted">No conversations yet.</p>` : html`
      <table class="list" id="conversations">
        <thead><tr><th scope="col">Conversation</th><th scope="col">Channel</th><th scope="col">Messages</th><th scope="col">Last change</th></tr></thead>
        <tbody>
          ${convs.map((c) => html`<tr key=${c.id}>
            <td><a href=${convPath(botId, c.id)}><code>${c.id}</code></a>${Object.entries(c.tags || {}).map(([k, v]) => html` <span class="tag">${k}=${v}</span>`)}</td>
            <td>${c.integration}/${c.channel}</td>
            <td>${c.messageCount}</td>
            <td>${when(c.updatedAt)}</td>
          </tr>`)}
        </tbody>
      </table>
      ${next && html`<button type="button" id="conversations-more" onClick=${() => more(next)}>More</button>`}`}`
}

// text is what a message says, whatever its type.
function text(m) {
  const p = m.payload || {}
  if (typeof p.text === 'string') return p.text
  return m.type + ' ' + JSON.stringify(p)
}

// allPages reads up to max items of a Runtime API listing, newest first.
async function allPages(botId, path, name, query, max = 500) {
  const out = []
  let nextToken
  do {
    const page = await runtime(botId, 'GET', path, { query: { ...query, nextToken } })
    out.push(...page[name])
    nextToken = page.meta && page.meta.nextToken
  } while (nextToken && out.length < max)
  return out
}

// handledBy gives each log line to the user's message it was written for:
// the latest incoming message created before it (a few milliseconds of
// leeway: a message's date may run ahead of the clock). Returns message id
// → lines.
function handledBy(messages, lines) {
  const incoming = (messages || []).filter((m) => m.direction !== 'outgoing').map((m) => [m.id, Date.parse(m.createdAt)])
  const out = {}
  for (const l of lines) {
    const t = Date.parse(l.timestamp) + 5
    let owner = null
    for (const [id, at] of incoming) if (at <= t) owner = id
    if (owner) (out[owner] = out[owner] || []).push(l)
  }
  return out
}

const STATES = { connecting: 'connecting…', open: 'live', retrying: 'reconnecting…', off: 'paused' }

export function ConversationPage({ botId, convId }) {
  const { bot, error: botError } = useBot(botId)
  const [messages, setMessages] = useState(null)
  const [events, setEvents] = useState(null)
  const [custom, setCustom] = useState([]) // the chat users' custom events, as signalled
  const [error, setError] = useState(null)
  const [live, setLive] = useState(true)
  const [state, setState] = useState('connecting')
  const [nudge, setNudge] = useState(0)
  const [lines, setLines] = useState([])
  const gen = useRef(0) // the latest load wins
  const list = useRef()
  useEffect(() => {
    const el = list.current
    if (el) el.scrollTop = el.scrollHeight // the newest at the bottom, in view
  }, [messages, lines])

  const load = async () => {
    const mine = ++gen.current
    try {
      const [ms, evs] = await Promise.all([
        allPages(botId, '/messages', 'messages', { conversationId: convId }),
        allPages(botId, '/events', 'events', { conversationId: convId }),
      ])
      if (mine !== gen.current) return
      setMessages(ms.reverse())
      setEvents(evs.reverse())
      setError(null)
    } catch (err) {
      if (mine === gen.current) setError(err)
    }
  }

  useEffect(() => {
    document.title = 'Conversation · botplatform'
    setCustom([])
    load()
  }, [botId, convId])

  // The stream: every signal reloads (once per burst) and nudges the logs;
  // a stream that ends is opened again, and what was missed reloaded.
  useEffect(() => {
    if (!live) {
      setState('off')
      return
    }
    const ctl = new AbortController()
    let retry
    let burst
    const onSignal = (sig) => {
      if (sig.type === 'event_created' && sig.data) setCustom((old) => old.concat(sig.data).slice(-100))
      clearTimeout(burst)
      burst = setTimeout(() => {
        load()
        setNudge((n) => n + 1)
      }, 50)
    }
    const connect = async () => {
      setState('connecting')
      try {
        await watch(botId, convId, onSignal, ctl.signal, () => {
          setState('open')
          load()
        })
      } catch (err) {
        if (ctl.signal.aborted) return
        setError(err)
      }
      if (ctl.signal.aborted) return
      setState('retrying')
      load() // what happened while the stream was down
      retry = setTimeout(connect, 2000)
    }
    connect()
    return () => {
      ctl.abort()
      clearTimeout(retry)
      clearTimeout(burst)
    }
  }, [botId, convId, live])

  const handled = handledBy(messages, lines)
  return html`
    <${BotNav} bot=${bot} botId=${botId} page="conversations" />
    <p class="crumbs"><a href=${convPath(botId)}>Conversations</a> /</p>
    <div class="section-head">
      <h2 id="conversation-h"><code>${convId}</code></h2>
      <span class=${'stream st-' + state} id="conversation-stream" role="status">${STATES[state]}</span>
      <label class="check"><input type="checkbox" id="conversation-live" checked=${live} onChange=${(e) => setLive(e.target.checked)} /> live</label>
    </div>
    <${ErrorText} error=${botError || error} />
    <div class="columns">
      <section aria-label="Messages" class="chat">
        <ol class="messages" id="conversation-messages" aria-live="polite" ref=${list}>
          ${messages === null ? html`<li class="muted">Loading…</li>` : messages.length === 0 && html`<li class="muted">No messages.</li>`}
          ${(messages || []).map((m) => html`<li key=${m.id} class=${m.direction === 'outgoing' ? 'from-bot' : 'from-user'} data-message=${m.id}>
            <span class="who">${m.direction === 'outgoing' ? 'bot' : 'user ' + m.userId}</span>
            <span class="text">${text(m)}</span>
            <time datetime=${m.createdAt}>${when(m.createdAt)}</time>
            ${handled[m.id] && html`<ul class="handled" aria-label="What the bot logged for it">
              ${handled[m.id].map((l) => html`<li class=${'lvl-' + l.level}><span class="lvl">${l.level}</span> ${l.message}</li>`)}
            </ul>`}
          </li>`)}
        </ol>
      </section>
      <div>
        <section aria-labelledby="events-h">
          <h2 id="events-h" class="section-title">Events the bot received</h2>
          <p class="hint">The users' messages (on the left) and custom events, and the events the bot created for itself
            (<code>listEvents</code>), with how their handling ended.</p>
          <ol class="events" id="conversation-events" aria-live="polite">
            ${events !== null && events.length === 0 && custom.length === 0 && html`<li class="muted">No events.</li>`}
            ${custom.map((ev) => html`<li key=${'c' + ev.id}>
              <span class="ev-type">custom event</span> <span class="muted">from user ${ev.userId}</span>
              <code class="ev-payload">${JSON.stringify(ev.payload)}</code>
              <time datetime=${ev.createdAt}>${when(ev.createdAt)}</time>
            </li>`)}
            ${(events || []).map((ev) => html`<li key=${ev.id} data-event=${ev.id}>
              <span class="ev-type">${ev.type}</span> <span class=${'status ev-' + ev.status}>${ev.status}</span>
              ${ev.failureReason && html`<span class="error-text">${ev.failureReason}</span>`}
              <code class="ev-payload">${JSON.stringify(ev.payload)}</code>
              <time datetime=${ev.createdAt}>${when(ev.createdAt)}</time>
            </li>`)}
          </ol>
        </section>
        <${Logs} botId=${botId} conversationId=${convId} nudge=${nudge} onLines=${setLines} />
      </div>
    </div>`
}

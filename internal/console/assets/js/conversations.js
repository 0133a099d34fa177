// A bot's conversations, through the Runtime API with the signed-in token
// (listConversations, listMessages): the list, newest first, and one
// conversation's messages with the log lines its handling wrote, both
// looked at again every two seconds while live.
import { html, useState, useEffect, ErrorText, when } from './ui.js'
import { runtime } from './api.js'
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

export function ConversationPage({ botId, convId }) {
  const { bot, error: botError } = useBot(botId)
  const [messages, setMessages] = useState(null)
  const [error, setError] = useState(null)
  const [live, setLive] = useState(true)

  useEffect(() => {
    document.title = 'Conversation · botplatform'
    let stopped = false
    let timer
    const load = async () => {
      try {
        const out = []
        let nextToken
        do {
          const page = await runtime(botId, 'GET', '/messages', { query: { conversationId: convId, nextToken } })
          out.push(...page.messages)
          nextToken = page.meta && page.meta.nextToken
        } while (nextToken && out.length < 500 && !stopped)
        if (stopped) return
        setMessages(out.reverse())
        setError(null)
      } catch (err) {
        if (!stopped) setError(err)
      }
      if (!stopped && live) timer = setTimeout(load, 2000)
    }
    load()
    return () => {
      stopped = true
      clearTimeout(timer)
    }
  }, [botId, convId, live])

  return html`
    <${BotNav} bot=${bot} botId=${botId} page="conversations" />
    <p class="crumbs"><a href=${convPath(botId)}>Conversations</a> /</p>
    <div class="section-head">
      <h2 id="conversation-h"><code>${convId}</code></h2>
      <label class="check"><input type="checkbox" id="conversation-live" checked=${live} onChange=${(e) => setLive(e.target.checked)} /> live</label>
    </div>
    <${ErrorText} error=${botError || error} />
    <div class="columns">
      <section aria-label="Messages" class="chat">
        <ol class="messages" id="conversation-messages" aria-live="polite">
          ${messages === null ? html`<li class="muted">Loading…</li>` : messages.length === 0 && html`<li class="muted">No messages.</li>`}
          ${(messages || []).map((m) => html`<li key=${m.id} class=${m.direction === 'outgoing' ? 'from-bot' : 'from-user'}>
            <span class="who">${m.direction === 'outgoing' ? 'bot' : 'user ' + m.userId}</span>
            <span class="text">${text(m)}</span>
            <time datetime=${m.createdAt}>${when(m.createdAt)}</time>
          </li>`)}
        </ol>
      </section>
      <${Logs} botId=${botId} conversationId=${convId} />
    </div>`
}

// The chat tester: talk to a bot as a new user through its Chat API, the
// way a website's chat widget would (createUser, createConversation,
// createMessage, and the conversation's signal stream).
import { html, useState, useEffect, useRef, ErrorText, when } from './ui.js'
import { admin, chat, chatPath, listen } from './api.js'
import { BotNav, useBot } from './botnav.js'

// textOf is what a message shows: its text, or its payload's type.
function textOf(payload) {
  if (!payload) return ''
  if (typeof payload.text === 'string') return payload.text
  return '[' + (payload.type || 'message') + '] ' + JSON.stringify(payload)
}

// hintAfterMs is how long a message waits for a reply before the tester
// says why none may come.
const hintAfterMs = 3000

// hintRecheckMs and hintRechecks: how often, and how many times, the
// tester looks again for the bot's failure while no reply comes.
const hintRecheckMs = 2000
const hintRechecks = 90

// noCode says that the bot answers nothing, having no code, no url and not
// being a `bp dev` bot; '' otherwise.
function noCode(bot) {
  if (!bot || bot.deployedAt || bot.url || bot.dev) return ''
  return 'This bot has no code, so it answers nothing: write some on its Code tab and deploy it.'
}

// lastError is the bot's last error logged in the conversation, as a hint;
// '' when there is none (or the logs cannot be read).
async function lastError(botId, conversation) {
  try {
    const page = await admin('GET', '/bots/' + encodeURIComponent(botId) + '/logs', {
      query: { timeStart: conversation.createdAt, conversationId: conversation.id, level: 'error' },
    })
    const logs = page.logs || []
    return logs.length ? 'No reply: the bot failed: ' + logs[logs.length - 1].message : ''
  } catch {
    return ''
  }
}

export function ChatPage({ botId }) {
  const { bot, error: botError } = useBot(botId)
  const [conv, setConv] = useState(null) // {base, key, user, conversation}
  const [messages, setMessages] = useState([])
  const [text, setText] = useState('')
  const [error, setError] = useState(null)
  const [status, setStatus] = useState('')
  const [round, setRound] = useState(0) // a new conversation each time
  const [hint, setHint] = useState('') // why no reply may come
  const [typing, setTyping] = useState(false) // the bot said it is writing
  const list = useRef()
  const replies = useRef(0) // the bot's messages so far

  const webhookUrl = bot && bot.integrations && bot.integrations.chat && bot.integrations.chat.webhookUrl
  useEffect(() => {
    document.title = 'Chat tester · botplatform'
    if (!webhookUrl) return
    const base = chatPath(webhookUrl)
    const abort = new AbortController()
    const add = (m) => {
      if (m.isBot) {
        replies.current++
        setHint('')
        setTyping(false)
      }
      setMessages((old) => (old.some((o) => o.id === m.id) ? old : old.concat(m)))
    }
    setMessages([])
    setHint('')
    setTyping(false)
    setConv(null)
    setError(null)
    setStatus('Connecting…')
    ;(async () => {
      const { user, key } = await chat(base, null, 'POST', '/users', { body: {} })
      const { conversation } = await chat(base, key, 'POST', '/conversations', { body: {} })
      setConv({ base, key, user, conversation })
      setStatus('Connected as a new user.')
      await listen(base, key, conversation.id, (s) => {
        if (s.type === 'message_created') add(s.data)
        // A bot that streams its answer sends it, then changes it as it
        // comes (updateMessage): the tester shows each change in place.
        else if (s.type === 'message_updated') setMessages((old) => old.map((o) => (o.id === s.data.id ? { ...o, payload: s.data.payload } : o)))
        else if (s.type === 'typing_started') setTyping(true)
        else if (s.type === 'typing_stopped') setTyping(false)
      }, abort.signal)
      setStatus('The stream ended.')
    })().catch((err) => {
      if (!abort.signal.aborted) {
        setError(err)
        setStatus('')
      }
    })
    return () => abort.abort()
  }, [webhookUrl, round])

  useEffect(() => {
    if (list.current) list.current.scrollTop = list.current.scrollHeight
  }, [messages])

  const send = async (e) => {
    e.preventDefault()
    if (!conv || !text.trim()) return
    setError(null)
    try {
      const { message } = await chat(conv.base, conv.key, 'POST', '/messages', {
        body: { conversationId: conv.conversation.id, payload: { type: 'text', text } },
      })
      setMessages((old) => (old.some((o) => o.id === message.id) ? old : old.concat({ ...message, isBot: false })))
      setText('')
      // A message left unanswered for a while gets a word on why, and the
      // bot's failure as soon as it is logged (a bot's first event may take
      // a while: its process starts).
      const before = replies.current
      const check = async (left) => {
        if (replies.current !== before) return
        const failed = await lastError(botId, conv.conversation)
        if (replies.current !== before) return
        setHint(failed || 'No reply yet: the Logs tab of the bot shows what it does.')
        if (!failed && left > 0) setTimeout(() => check(left - 1), hintRecheckMs)
      }
      setTimeout(() => check(hintRechecks), hintAfterMs)
    } catch (err) {
      setError(err)
    }
  }

  return html`
    <${BotNav} bot=${bot} botId=${botId} page="chat" />
    <${ErrorText} error=${botError} />
    <section aria-labelledby="chat-h" class="chat">
      <div class="section-head">
        <h2 id="chat-h">Chat tester</h2>
        <span class="muted" role="status" id="chat-status">${status}</span>
        <button type="button" onClick=${() => setRound(round + 1)}>New conversation</button>
      </div>
      ${(noCode(bot) || hint) && html`<p class="hint" id="chat-hint" role="status">${noCode(bot) || hint}</p>`}
      <ol class="messages" id="messages" ref=${list} aria-live="polite">
        ${messages.length === 0 && html`<li class="muted">Say something to the bot.</li>`}
        ${messages.map((m) => html`<li key=${m.id} class=${m.isBot ? 'from-bot' : 'from-user'}>
          <span class="who">${m.isBot ? 'bot' : 'you'}</span>
          <span class="text">${textOf(m.payload)}</span>
          <time datetime=${m.createdAt}>${when(m.createdAt)}</time>
        </li>`)}
        ${typing && html`<li class="typing muted" id="chat-typing"><span class="who">bot</span> <span class="text">is writing…</span></li>`}
      </ol>
      <form class="inline send" onSubmit=${send}>
        <label for="chat-text" class="sr">Message</label>
        <input id="chat-text" value=${text} onInput=${(e) => setText(e.target.value)} placeholder="Type a message" disabled=${!conv} />
        <button type="submit" id="chat-send" disabled=${!conv}>Send</button>
      </form>
      <${ErrorText} error=${error} id="chat-error" />
    </section>`
}

// The chat tester: talk to a bot as a new user through its Chat API, the
// way a website's chat widget would (createUser, createConversation,
// createMessage, and the conversation's signal stream).
import { html, useState, useEffect, useRef, ErrorText, when } from './ui.js'
import { chat, chatPath, listen } from './api.js'
import { BotNav, useBot } from './botnav.js'

// textOf is what a message shows: its text, or its payload's type.
function textOf(payload) {
  if (!payload) return ''
  if (typeof payload.text === 'string') return payload.text
  return '[' + (payload.type || 'message') + '] ' + JSON.stringify(payload)
}

export function ChatPage({ botId }) {
  const { bot, error: botError } = useBot(botId)
  const [conv, setConv] = useState(null) // {base, key, user, conversation}
  const [messages, setMessages] = useState([])
  const [text, setText] = useState('')
  const [error, setError] = useState(null)
  const [status, setStatus] = useState('')
  const [round, setRound] = useState(0) // a new conversation each time
  const list = useRef()

  const webhookUrl = bot && bot.integrations && bot.integrations.chat && bot.integrations.chat.webhookUrl
  useEffect(() => {
    document.title = 'Chat tester · botplatform'
    if (!webhookUrl) return
    const base = chatPath(webhookUrl)
    const abort = new AbortController()
    const add = (m) => setMessages((old) => (old.some((o) => o.id === m.id) ? old : old.concat(m)))
    setMessages([])
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
      <ol class="messages" id="messages" ref=${list} aria-live="polite">
        ${messages.length === 0 && html`<li class="muted">Say something to the bot.</li>`}
        ${messages.map((m) => html`<li key=${m.id} class=${m.isBot ? 'from-bot' : 'from-user'}>
          <span class="who">${m.isBot ? 'bot' : 'you'}</span>
          <span class="text">${textOf(m.payload)}</span>
          <time datetime=${m.createdAt}>${when(m.createdAt)}</time>
        </li>`)}
      </ol>
      <form class="inline send" onSubmit=${send}>
        <label for="chat-text" class="sr">Message</label>
        <input id="chat-text" value=${text} onInput=${(e) => setText(e.target.value)} placeholder="Type a message" disabled=${!conv} />
        <button type="submit" id="chat-send" disabled=${!conv}>Send</button>
      </form>
      <${ErrorText} error=${error} id="chat-error" />
    </section>`
}

/*
 * botplatform web chat: a chat bubble (or a full page) that talks to a bot
 * through its Chat API, as any client of @botpress/chat would: it creates a
 * chat user (kept in this browser's localStorage, per bot), opens a
 * conversation, sends the visitor's messages and reads the bot's replies
 * from the conversation's event stream. No dependencies, no inline script,
 * no innerHTML: every string from the network is set as text.
 *
 * Embed: <script src=".../webchat/v1/inject.js" data-chat-url="<the bot's webhookUrl>" defer></script>
 * or call window.botplatformWebchat.init({ chatUrl, botName, color, greeting, position, mode, open }).
 * docs/webchat.md has every option.
 */
;(function () {
  'use strict'
  if (window.botplatformWebchat) return // loaded twice

  var script = document.currentScript

  var CSS = [
    ':host { all: initial; }',
    '.root { --accent: #2563eb; font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #111827; }',
    '.root * { box-sizing: border-box; }',
    '.bubble { position: fixed; bottom: 20px; right: 20px; width: 56px; height: 56px; border-radius: 50%; border: 0; cursor: pointer;',
    '  background: var(--accent); color: #fff; box-shadow: 0 4px 14px rgba(0,0,0,.25); display: flex; align-items: center; justify-content: center; z-index: 2147483000; }',
    '.bubble:focus-visible, button:focus-visible, input:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }',
    '.bubble svg { width: 28px; height: 28px; fill: currentColor; }',
    '.left .bubble { right: auto; left: 20px; }',
    '.panel { position: fixed; bottom: 88px; right: 20px; width: 370px; height: min(560px, calc(100vh - 110px)); background: #fff;',
    '  border-radius: 12px; box-shadow: 0 8px 30px rgba(0,0,0,.25); display: flex; flex-direction: column; overflow: hidden; z-index: 2147483000; }',
    '.left .panel { right: auto; left: 20px; }',
    '.panel[hidden] { display: none; }',
    '.fullscreen .panel { inset: 0; width: auto; height: auto; border-radius: 0; box-shadow: none; }',
    'header { background: var(--accent); color: #fff; padding: 12px 14px; display: flex; align-items: center; gap: 8px; }',
    'header .title { font-weight: 600; flex: 1; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }',
    'header .status { font-size: 12px; opacity: .9; }',
    'header button { background: transparent; border: 0; color: #fff; font-size: 22px; line-height: 1; cursor: pointer; padding: 0 4px; }',
    '.messages { list-style: none; margin: 0; padding: 12px; flex: 1; overflow-y: auto; display: flex; flex-direction: column; gap: 8px; background: #f9fafb; }',
    '.msg { max-width: 85%; display: flex; flex-direction: column; gap: 6px; }',
    '.msg .body { padding: 8px 12px; border-radius: 14px; white-space: pre-wrap; overflow-wrap: anywhere; }',
    '.from-bot { align-self: flex-start; }',
    '.from-bot .body { background: #e5e7eb; color: #111827; border-bottom-left-radius: 4px; }',
    '.from-user { align-self: flex-end; }',
    '.from-user .body { background: var(--accent); color: #fff; border-bottom-right-radius: 4px; }',
    '.greeting .body { background: #fff; border: 1px solid #e5e7eb; }',
    '.body img, .body video { max-width: 100%; border-radius: 8px; display: block; }',
    '.body a { color: inherit; }',
    '.choices { display: flex; flex-wrap: wrap; gap: 6px; }',
    '.choices button { border: 1px solid var(--accent); color: var(--accent); background: #fff; border-radius: 16px; padding: 5px 12px; cursor: pointer; font: inherit; }',
    '.choices button:hover { background: #eff6ff; }',
    '.choices a { border: 1px solid var(--accent); color: var(--accent); border-radius: 16px; padding: 5px 12px; text-decoration: none; }',
    '.choices span { padding: 5px 0; color: #4b5563; }',
    '.card { border: 1px solid #d1d5db; border-radius: 10px; background: #fff; padding: 8px; display: flex; flex-direction: column; gap: 6px; white-space: normal; }',
    '.card .card-title { font-weight: 600; }',
    '.card .card-subtitle { color: #4b5563; font-size: 13px; }',
    '.carousel { display: flex; gap: 8px; overflow-x: auto; }',
    '.carousel .card { min-width: 200px; }',
    '.error { background: #fef2f2; color: #991b1b; border-top: 1px solid #fecaca; padding: 8px 12px; font-size: 13px; display: flex; gap: 8px; align-items: flex-start; }',
    '.error[hidden] { display: none; }',
    '.error span { flex: 1; }',
    '.error button[hidden] { display: none; }',
    '.error button { font: inherit; border: 1px solid #991b1b; background: #fff; color: #991b1b; border-radius: 6px; cursor: pointer; }',
    'form { display: flex; gap: 8px; padding: 10px; border-top: 1px solid #e5e7eb; background: #fff; }',
    'form input { flex: 1; font: inherit; padding: 8px 10px; border: 1px solid #9ca3af; border-radius: 8px; min-width: 0; color: #111827; background: #fff; }',
    'form button { font: inherit; border: 0; background: var(--accent); color: #fff; border-radius: 8px; padding: 8px 14px; cursor: pointer; }',
    'form button:disabled, form input:disabled { opacity: .55; cursor: not-allowed; }',
    '.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }',
    '@media (max-width: 480px) { .root:not(.fullscreen) .panel { inset: 0; width: auto; height: auto; border-radius: 0; } }',
  ].join('\n')

  // el builds an element; text is always set as text.
  function el(tag, props, children) {
    var e = document.createElement(tag)
    for (var k in props || {}) {
      if (k === 'text') e.textContent = props[k]
      else if (k === 'class') e.className = props[k]
      else if (k.slice(0, 2) === 'on') e.addEventListener(k.slice(2), props[k])
      else e.setAttribute(k, props[k])
    }
    ;(children || []).forEach(function (c) {
      if (c) e.appendChild(c)
    })
    return e
  }

  // safeURL is url when it is http(s), else null: a bot's reply cannot
  // make a javascript: link.
  function safeURL(url) {
    try {
      var u = new URL(String(url), location.href)
      return u.protocol === 'http:' || u.protocol === 'https:' ? u.href : null
    } catch (e) {
      return null
    }
  }

  function ChatError(status, type, message) {
    this.status = status
    this.type = type
    this.message = message
  }

  function init(options) {
    var o = options || {}
    if (!o.chatUrl) throw new Error('botplatformWebchat.init: chatUrl (the bot\'s webhookUrl) is required')
    var chatUrl = String(o.chatUrl).replace(/\/+$/, '')
    var botName = o.botName || 'Chat'
    var fullscreen = o.mode === 'fullscreen'
    var storageKey = 'botplatform-webchat:' + chatUrl
    var state = load()
    var started = false
    var ready = false
    var stopped = false
    var stream = null // the AbortController of the open stream
    var shown = {} // message ids on screen

    // The widget lives in a shadow root: the page's styles do not reach it.
    var host = el('div', { id: o.elementId || 'botplatform-webchat' })
    var shadow = host.attachShadow({ mode: 'open' })
    if (shadow.adoptedStyleSheets !== undefined && typeof CSSStyleSheet === 'function' && CSSStyleSheet.prototype.replaceSync) {
      var sheet = new CSSStyleSheet()
      sheet.replaceSync(CSS) // not an inline style: a page's style-src need not allow 'unsafe-inline'
      shadow.adoptedStyleSheets = [sheet]
    } else {
      shadow.appendChild(el('style', { text: CSS }))
    }
    var root = el('div', { class: 'root' + (fullscreen ? ' fullscreen' : '') + (o.position === 'left' ? ' left' : '') })
    if (o.color) root.style.setProperty('--accent', String(o.color))
    shadow.appendChild(root)

    var status = el('span', { class: 'status', role: 'status' })
    var list = el('ol', { class: 'messages', 'aria-live': 'polite', 'aria-label': 'Messages' })
    var errorText = el('span')
    var retryButton = el('button', { type: 'button', class: 'retry', text: 'Retry', onclick: function () { connect() } })
    var errorBox = el('div', { class: 'error', role: 'alert', hidden: '' }, [errorText, retryButton])
    var input = el('input', { type: 'text', name: 'message', autocomplete: 'off', placeholder: 'Type a message', 'aria-label': 'Message', disabled: '' })
    var send = el('button', { type: 'submit', class: 'send', text: 'Send', disabled: '' })
    var form = el('form', { onsubmit: function (e) {
      e.preventDefault()
      var text = input.value.trim()
      if (text) sendText(text, true)
    } }, [input, send])
    var close = fullscreen ? null : el('button', { type: 'button', class: 'close', 'aria-label': 'Close the chat', text: '\u00d7', onclick: function () { toggle(false) } })
    var title = el('span', { class: 'title', text: botName })
    var panel = el('section', { class: 'panel', role: fullscreen ? 'main' : 'dialog', 'aria-label': 'Chat with ' + botName },
      [el('header', {}, [title, status, close]), list, errorBox, form])
    if (!fullscreen) panel.setAttribute('hidden', '')
    var bubble = fullscreen ? null : el('button', { type: 'button', class: 'bubble', 'aria-label': 'Open the chat with ' + botName, 'aria-expanded': 'false', onclick: function () { toggle() } })
    if (bubble) {
      var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg')
      svg.setAttribute('viewBox', '0 0 24 24')
      svg.setAttribute('aria-hidden', 'true')
      var path = document.createElementNS('http://www.w3.org/2000/svg', 'path')
      path.setAttribute('d', 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z')
      svg.appendChild(path)
      bubble.appendChild(svg)
      root.appendChild(bubble)
    }
    root.appendChild(panel)
    if (o.greeting) list.appendChild(el('li', { class: 'msg from-bot greeting' }, [el('div', { class: 'body', text: String(o.greeting) })]))
    panel.addEventListener('keydown', function (e) {
      if (e.key === 'Escape' && !fullscreen) toggle(false)
    })

    function mount() {
      document.body.appendChild(host)
      if (fullscreen || o.open) toggle(true)
    }
    if (document.body) mount()
    else document.addEventListener('DOMContentLoaded', mount)

    function toggle(open) {
      if (open === undefined) open = panel.hasAttribute('hidden')
      if (open) panel.removeAttribute('hidden')
      else panel.setAttribute('hidden', '')
      if (bubble) bubble.setAttribute('aria-expanded', String(open))
      if (open) {
        if (!started) connect()
        if (ready) input.focus()
      } else if (bubble) bubble.focus()
    }

    // The visitor's chat user and conversation, per bot, in this browser.
    function load() {
      try {
        return JSON.parse(localStorage.getItem(storageKey)) || {}
      } catch (e) {
        return {}
      }
    }
    function save() {
      try {
        localStorage.setItem(storageKey, JSON.stringify({ key: state.key, userId: state.userId, conversationId: state.conversationId }))
      } catch (e) {
        // storage off: the chat lasts as long as the page
      }
    }

    function api(method, path, body) {
      var headers = {}
      if (state.key) headers['x-user-key'] = state.key
      if (body !== undefined) headers['Content-Type'] = 'application/json'
      return fetch(chatUrl + path, {
        method: method, headers: headers, credentials: 'omit', cache: 'no-store', mode: 'cors',
        body: body === undefined ? undefined : JSON.stringify(body),
      }).then(function (res) {
        return res.text().then(function (text) {
          var data = null
          try {
            data = text ? JSON.parse(text) : null
          } catch (e) {
            data = null
          }
          if (!res.ok) throw new ChatError(res.status, data && data.type, (data && data.message) || text || 'HTTP ' + res.status)
          return data
        })
      }, function () {
        throw new ChatError(0, 'network', 'The chat service cannot be reached from this page. If it runs, this page\'s origin (' +
          location.origin + ') is probably not among the bot\'s allowed origins.')
      })
    }

    function setStatus(s) {
      status.textContent = s
    }
    // showError shows what failed; retry offers to connect again.
    function showError(err, retry) {
      errorText.textContent = (err && err.message) || String(err)
      if (retry) retryButton.removeAttribute('hidden')
      else retryButton.setAttribute('hidden', '')
      errorBox.removeAttribute('hidden')
    }
    function clearError() {
      errorBox.setAttribute('hidden', '')
      errorText.textContent = ''
    }
    function setReady(on) {
      ready = on
      if (on) {
        input.removeAttribute('disabled')
        send.removeAttribute('disabled')
      } else {
        input.setAttribute('disabled', '')
        send.setAttribute('disabled', '')
      }
    }

    // connect signs the visitor in (a new chat user the first time), opens
    // the conversation, shows what it holds and listens for the bot.
    function connect() {
      started = true
      clearError()
      setStatus('Connecting\u2026')
      var user = state.key
        ? api('GET', '/users/me').catch(function (err) {
            if (err.status !== 401 && err.status !== 403 && err.status !== 404) throw err
            state = {} // the key no longer works: start over as a new user
            return null
          })
        : Promise.resolve(null)
      return user
        .then(function (found) {
          if (found) return found
          return api('POST', '/users', {}).then(function (r) {
            state = { key: r.key, userId: r.user.id }
            save()
            return r
          })
        })
        .then(function (r) {
          state.userId = r.user.id
          if (!state.conversationId) return null
          return api('POST', '/conversations/get-or-create', { id: state.conversationId }).catch(function (err) {
            if (err.status !== 403 && err.status !== 404 && err.status !== 400) throw err
            return null
          })
        })
        .then(function (r) {
          return r || api('POST', '/conversations', {})
        })
        .then(function (r) {
          state.conversationId = r.conversation.id
          save()
          return history()
        })
        .then(function () {
          setReady(true)
          setStatus('')
          if (!panel.hasAttribute('hidden')) input.focus()
          listen(0)
        })
        .catch(function (err) {
          setReady(false)
          setStatus('Not connected')
          showError(err, true)
        })
    }

    // history shows the conversation's latest messages, oldest first.
    function history() {
      var all = []
      function page(token, n) {
        var q = token ? '?nextToken=' + encodeURIComponent(token) : ''
        return api('GET', '/conversations/' + encodeURIComponent(state.conversationId) + '/messages' + q).then(function (r) {
          all = all.concat(r.messages || [])
          var next = r.meta && r.meta.nextToken
          if (next && n < 5) return page(next, n + 1)
        })
      }
      return page('', 1).then(function () {
        all.sort(function (a, b) {
          return a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0
        })
        all.forEach(add)
      })
    }

    // listen reads the conversation's signals; when the stream ends or
    // fails, it waits (longer each time, up to 10 s), catches up on what
    // it missed and listens again.
    function listen(failures) {
      if (stopped) return
      var abort = new AbortController()
      stream = abort
      var opened = false
      fetch(chatUrl + '/conversations/' + state.conversationId + '/listen', {
        headers: { 'x-user-key': state.key, Accept: 'text/event-stream' }, credentials: 'omit', cache: 'no-store', mode: 'cors', signal: abort.signal,
      })
        .then(function (res) {
          if (!res.ok || !res.body) throw new ChatError(res.status, '', 'the event stream answered ' + res.status)
          opened = true
          setStatus('')
          clearError()
          var reader = res.body.getReader()
          var decoder = new TextDecoder()
          var buf = ''
          function read() {
            return reader.read().then(function (chunk) {
              if (chunk.done) return
              buf += decoder.decode(chunk.value, { stream: true }).replace(/\r\n?/g, '\n')
              var end
              while ((end = buf.indexOf('\n\n')) >= 0) {
                signal(buf.slice(0, end))
                buf = buf.slice(end + 2)
              }
              return read()
            })
          }
          return read()
        })
        .catch(function (err) {
          return err
        })
        .then(function (err) {
          if (stopped || abort.signal.aborted) return
          if (err && (err.status === 401 || err.status === 403 || err.status === 404)) {
            // The user or the conversation is gone: start over.
            state = {}
            save()
            setReady(false)
            connect()
            return
          }
          var n = opened ? 0 : failures + 1
          setStatus('Reconnecting\u2026')
          setTimeout(function () {
            history().then(function () { listen(n) }, function () { listen(n + 1) })
          }, Math.min(10000, 1000 * Math.pow(2, n)))
        })
    }

    function signal(frame) {
      var data = frame
        .split('\n')
        .filter(function (l) { return l.indexOf('data:') === 0 })
        .map(function (l) { return l.slice(5).replace(/^ /, '') })
        .join('\n')
      if (!data || data === 'ping') return
      var s
      try {
        s = JSON.parse(data)
      } catch (e) {
        return
      }
      if (s.type === 'message_created') add(s.data)
      else if (s.type === 'message_deleted') {
        var li = shown[s.data.id]
        if (li && li.parentNode) li.parentNode.removeChild(li)
        delete shown[s.data.id]
      }
    }

    function sendText(text, typed) {
      if (!ready) return
      clearError()
      send.setAttribute('disabled', '')
      return api('POST', '/messages', { conversationId: state.conversationId, payload: { type: 'text', text: text } })
        .then(function (r) {
          add(r.message)
          if (typed) input.value = ''
        })
        .catch(function (err) {
          showError(err, false)
        })
        .then(function () {
          if (ready) send.removeAttribute('disabled')
        })
    }

    // add shows a message once (it comes back on the stream too).
    function add(m) {
      if (!m || !m.id || shown[m.id]) return
      var mine = m.userId === state.userId
      var li = el('li', { class: 'msg ' + (mine ? 'from-user' : 'from-bot'), 'data-id': m.id })
      if (m.createdAt) li.setAttribute('title', new Date(m.createdAt).toLocaleString())
      li.appendChild(el('span', { class: 'sr', text: mine ? 'You: ' : botName + ': ' }))
      render(m.payload || {}, li)
      shown[m.id] = li
      list.appendChild(li)
      list.scrollTop = list.scrollHeight
    }

    function bodyOf(text) {
      return el('div', { class: 'body', text: text == null ? '' : String(text) })
    }

    function choices(options) {
      return el('div', { class: 'choices' }, (options || []).map(function (op) {
        return el('button', { type: 'button', text: String(op.label || op.value), onclick: function () { sendText(String(op.value || op.label)) } })
      }))
    }

    function link(url, text) {
      var href = safeURL(url)
      if (!href) return el('span', { text: String(text || url) })
      return el('a', { href: href, target: '_blank', rel: 'noopener noreferrer', text: String(text || href) })
    }

    function card(c) {
      var img = c.imageUrl && safeURL(c.imageUrl)
      return el('div', { class: 'card' }, [
        img ? el('img', { src: img, alt: '' }) : null,
        el('div', { class: 'card-title', text: String(c.title || '') }),
        c.subtitle ? el('div', { class: 'card-subtitle', text: String(c.subtitle) }) : null,
        el('div', { class: 'choices' }, (c.actions || []).map(function (a) {
          if (a.action === 'url') return link(a.value, a.label)
          return el('button', { type: 'button', text: String(a.label || a.value), onclick: function () { sendText(String(a.value || a.label)) } })
        })),
      ])
    }

    // render adds what a message payload shows to li (compat-notes §1.6).
    function render(p, li) {
      var body
      switch (p.type) {
        case 'text':
          li.appendChild(bodyOf(p.text))
          return
        case 'markdown':
          li.appendChild(bodyOf(p.markdown)) // as text: no markup from the network
          return
        case 'image':
          var src = safeURL(p.imageUrl)
          body = bodyOf('')
          body.appendChild(src ? el('img', { src: src, alt: String(p.title || 'image') }) : el('span', { text: '[image]' }))
          li.appendChild(body)
          return
        case 'audio':
        case 'video':
          var media = safeURL(p[p.type + 'Url'])
          body = bodyOf('')
          body.appendChild(media ? el(p.type, { src: media, controls: '' }) : el('span', { text: '[' + p.type + ']' }))
          li.appendChild(body)
          return
        case 'file':
          body = bodyOf('')
          body.appendChild(link(p.fileUrl, p.title || 'file'))
          li.appendChild(body)
          return
        case 'location':
          body = bodyOf('')
          var where = [p.title, p.address].filter(Boolean).join(', ') || p.latitude + ', ' + p.longitude
          body.appendChild(link('https://www.openstreetmap.org/?mlat=' + Number(p.latitude) + '&mlon=' + Number(p.longitude), where))
          li.appendChild(body)
          return
        case 'choice':
        case 'dropdown':
          li.appendChild(bodyOf(p.text))
          li.appendChild(choices(p.options))
          return
        case 'card':
          li.appendChild(card(p))
          return
        case 'carousel':
          li.appendChild(el('div', { class: 'carousel' }, (p.items || []).map(card)))
          return
        case 'bloc':
          ;(p.items || []).forEach(function (item) {
            render(item || {}, li)
          })
          return
        default:
          li.appendChild(bodyOf('[' + String(p.type || 'message') + ']'))
      }
    }

    return {
      open: function () { toggle(true) },
      close: function () { toggle(false) },
      destroy: function () {
        stopped = true
        if (stream) stream.abort()
        if (host.parentNode) host.parentNode.removeChild(host)
      },
    }
  }

  window.botplatformWebchat = { init: init }

  // <script src=".../inject.js" data-chat-url="..."> starts it from its attributes.
  var d = script && script.dataset
  if (d && d.chatUrl) {
    init({ chatUrl: d.chatUrl, botName: d.botName, color: d.color, greeting: d.greeting, position: d.position, mode: d.mode, open: d.open === 'true' })
  }
})()

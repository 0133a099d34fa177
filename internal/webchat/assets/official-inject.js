/*
 * botplatform: the official web chat (@botpress/webchat, served by this
 * server at /webchat/official/) behind a chat bubble on any page. The chat
 * runs in a frame of this server's page /webchat/official/<webhookId>, so
 * its styles and script stay apart from the page's; the bot's allowed
 * origins decide which sites may frame it.
 *
 * Embed: <script src=".../webchat/official/v1/inject.js" data-chat-url="<the bot's webhookUrl>" defer></script>
 * or call window.botplatformOfficialWebchat.init({ chatUrl, botName, color, position, open }).
 * docs/webchat.md has every option.
 */
;(function () {
  'use strict'
  if (window.botplatformOfficialWebchat) return // loaded twice

  var script = document.currentScript
  var base = script ? script.src.replace(/\/webchat\/official\/v1\/inject\.js(\?.*)?$/, '') : ''

  function init(options) {
    var o = options || {}
    if (!o.chatUrl) throw new Error('botplatformOfficialWebchat.init: chatUrl (the bot\'s webhookUrl) is required')
    var hook = String(o.chatUrl).replace(/\/+$/, '').split('/').pop()
    var page = (o.base || base) + '/webchat/official/' + encodeURIComponent(hook)
    var color = /^[#a-zA-Z0-9(),.% -]{1,40}$/.test(o.color || '') ? o.color : '#2563eb' // a CSS colour, nothing more
    var left = o.position === 'left'

    var host = document.createElement('div')
    host.setAttribute('data-botplatform-webchat', 'official')
    var shadow = host.attachShadow({ mode: 'open' })
    var style = document.createElement('style')
    style.textContent = [
      ':host { all: initial; }',
      '.bubble { position: fixed; bottom: 20px; ' + (left ? 'left' : 'right') + ': 20px; width: 56px; height: 56px; border-radius: 50%; border: 0;',
      '  cursor: pointer; background: ' + color + '; color: #fff; box-shadow: 0 4px 14px rgba(0,0,0,.25); display: flex;',
      '  align-items: center; justify-content: center; z-index: 2147483000; }',
      '.bubble:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }',
      '.bubble svg { width: 28px; height: 28px; fill: currentColor; }',
      'iframe { position: fixed; bottom: 88px; ' + (left ? 'left' : 'right') + ': 20px; width: 400px; height: min(640px, calc(100vh - 110px));',
      '  border: 0; border-radius: 12px; box-shadow: 0 8px 30px rgba(0,0,0,.25); background: #fff; z-index: 2147483000; }',
      'iframe[hidden] { display: none; }',
      '@media (max-width: 480px) { iframe { inset: 0; width: 100%; height: 100%; border-radius: 0; } }'
    ].join('\n')
    shadow.appendChild(style)

    var frame = document.createElement('iframe')
    frame.title = o.botName ? 'Chat with ' + o.botName : 'Chat'
    frame.hidden = true
    frame.setAttribute('allow', 'clipboard-write')
    var loaded = false

    var bubble = document.createElement('button')
    bubble.className = 'bubble'
    bubble.type = 'button'
    bubble.setAttribute('aria-label', o.botName ? 'Chat with ' + o.botName : 'Open the chat')
    bubble.setAttribute('aria-expanded', 'false')
    var svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg')
    svg.setAttribute('viewBox', '0 0 24 24')
    var path = document.createElementNS('http://www.w3.org/2000/svg', 'path')
    path.setAttribute('d', 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H8l-4 4V6a2 2 0 0 1 2-2z')
    svg.appendChild(path)
    bubble.appendChild(svg)

    function open() {
      if (!loaded) {
        frame.src = page // nothing is created until the visitor opens the chat
        loaded = true
      }
      frame.hidden = false
      bubble.setAttribute('aria-expanded', 'true')
    }
    function close() {
      frame.hidden = true
      bubble.setAttribute('aria-expanded', 'false')
    }
    bubble.addEventListener('click', function () {
      if (frame.hidden) open()
      else close()
    })
    shadow.appendChild(frame)
    shadow.appendChild(bubble)
    document.body.appendChild(host)
    if (o.open) open()
    return {
      open: open,
      close: close,
      destroy: function () {
        host.remove()
      }
    }
  }

  window.botplatformOfficialWebchat = { init: init }
  if (script && script.dataset.chatUrl) {
    var d = script.dataset
    var start = function () {
      init({ chatUrl: d.chatUrl, botName: d.botName, color: d.color, position: d.position, open: d.open === 'true' })
    }
    if (document.body) start()
    else document.addEventListener('DOMContentLoaded', start)
  }
})()

// What every page shares: the view library, and small pieces of UI.
export { html, render, useState, useEffect, useRef, useCallback, useMemo } from '../vendor/htm/preact-htm.module.js'
import { html, useState, useEffect, useRef } from '../vendor/htm/preact-htm.module.js'

// ErrorText shows an API error (or nothing): its type, then its message.
export function ErrorText({ error, id }) {
  if (!error) return null
  const type = error.type ? error.type + ': ' : ''
  return html`<p class="error" role="alert" id=${id}>${type}${error.message}</p>`
}

// when formats an ISO time for a person, in their time zone.
export function when(iso) {
  if (!iso) return ''
  const d = new Date(iso)
  return isNaN(d) ? iso : d.toLocaleString()
}

// go changes the page (the route lives in the URL's fragment).
export function go(route) {
  location.hash = '#' + route
}

// size formats a number of bytes.
export function size(n) {
  if (typeof n !== 'number') return ''
  const units = ['B', 'KB', 'MB', 'GB', 'TB']
  let i = 0
  while (n >= 1024 && i < units.length - 1) {
    n /= 1024
    i++
  }
  return (i ? n.toFixed(1) : n) + ' ' + units[i]
}

// Confirm is a button that asks again in the page (no window.confirm):
// the first press shows "Delete?" with Yes and No, Yes runs onConfirm.
export function Confirm({ label, question, onConfirm, id }) {
  const [asking, setAsking] = useState(false)
  const yes = useRef()
  useEffect(() => {
    if (asking && yes.current) yes.current.focus()
  }, [asking])
  if (!asking) {
    return html`<button type="button" class="danger" id=${id} onClick=${() => setAsking(true)}>${label}</button>`
  }
  return html`<span class="confirm" role="group" aria-label=${question}>
    <span>${question}</span>
    <button type="button" class="danger" ref=${yes} id=${id && id + '-yes'} onClick=${() => {
      setAsking(false)
      onConfirm()
    }}>Yes, ${label.toLowerCase()}</button>
    <button type="button" class="link" id=${id && id + '-no'} onClick=${() => setAsking(false)}>No</button>
  </span>`
}

// Bar shows how much of a limit is used.
export function Bar({ label, value, max, text, id }) {
  const pct = max > 0 ? Math.min(100, (100 * value) / max) : 0
  return html`<div class="bar" id=${id}>
    <div class="bar-label"><span>${label}</span><span class="muted">${text}</span></div>
    <div class=${'bar-track' + (pct >= 90 ? ' high' : '')} role="meter" aria-label=${label} aria-valuemin="0" aria-valuemax=${max} aria-valuenow=${value}>
      <div class="bar-fill" style=${{ width: pct.toFixed(1) + '%' }}></div>
    </div>
  </div>`
}

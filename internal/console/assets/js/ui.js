// What every page shares: the view library, and small pieces of UI.
export { html, render, useState, useEffect, useRef, useCallback, useMemo } from '../vendor/htm/preact-htm.module.js'
import { html } from '../vendor/htm/preact-htm.module.js'

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

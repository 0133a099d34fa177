// A small code editor: a textarea (so typing, selection, undo and screen
// readers work as everywhere) over a highlighted copy of its text. The
// highlighting is built as DOM nodes from Prism's tokens, never as HTML.
import { html, useEffect, useRef } from './ui.js'

// Prism is the global the vendored prism-core.min.js defines.
const Prism = globalThis.Prism

function tokenNodes(tokens, parent) {
  for (const t of tokens) {
    if (typeof t === 'string') {
      parent.append(t)
      continue
    }
    const span = document.createElement('span')
    span.className = ['token', t.type].concat(t.alias || []).join(' ')
    if (Array.isArray(t.content)) tokenNodes(t.content, span)
    else if (typeof t.content === 'string') span.textContent = t.content
    else tokenNodes([t.content], span)
    parent.append(span)
  }
}

function highlight(code, target) {
  target.replaceChildren()
  if (Prism && Prism.languages.javascript) tokenNodes(Prism.tokenize(code, Prism.languages.javascript), target)
  else target.textContent = code
  target.append('\n') // a last empty line keeps its height
}

// CodeEditor edits value; errorLine (1-based) is marked in the gutter.
// Tab indents; Escape then Tab leaves the editor.
export function CodeEditor({ id, value, onInput, errorLine, label }) {
  const code = useRef()
  const gutter = useRef()
  const area = useRef()
  const escaped = useRef(false)

  useEffect(() => highlight(value, code.current), [value])
  const lines = value.split('\n').length

  const sync = () => {
    code.current.parentNode.scrollTop = area.current.scrollTop
    code.current.parentNode.scrollLeft = area.current.scrollLeft
    gutter.current.scrollTop = area.current.scrollTop
  }
  const keyDown = (e) => {
    if (e.key === 'Escape') {
      escaped.current = true
      return
    }
    if (e.key === 'Tab' && !e.shiftKey && !escaped.current) {
      e.preventDefault()
      const ta = e.target
      const { selectionStart: s, selectionEnd: end } = ta
      ta.setRangeText('  ', s, end, 'end')
      onInput(ta.value)
    }
    escaped.current = false
  }
  return html`
    <div class="editor">
      <div class="gutter" ref=${gutter} aria-hidden="true">
        ${Array.from({ length: lines }, (_, i) => html`<div class=${i + 1 === errorLine ? 'bad' : ''}>${i + 1}</div>`)}
      </div>
      <div class="code-area">
        <pre class="highlight" aria-hidden="true"><code ref=${code}></code></pre>
        <textarea id=${id} ref=${area} aria-label=${label} spellcheck="false" autocapitalize="off" autocomplete="off"
          wrap="off" value=${value} onInput=${(e) => onInput(e.target.value)} onScroll=${sync} onKeyDown=${keyDown}></textarea>
      </div>
    </div>`
}

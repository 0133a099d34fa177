// The search playground: a query over a bot's files (searchFiles with this
// server's explain=true), the passages ranked with their fused scores, and
// per passage the parts the server ranked by: its full-text (BM25) rank and
// score, its vector rank and similarity, what each added to the fused
// score, and the words (the query's, and related words standing in for
// them) that scored it. The query's words are also marked in the text.
import { html, useState, useEffect, ErrorText } from './ui.js'
import { files } from './api.js'
import { BotNav, useBot } from './botnav.js'
import { parseTags, filePath } from './files.js'

const STOP = new Set('a an and are as at be by for from has have how i in is it of on or that the this to was what when where which who why will with you your do does did can'.split(' '))
const WORD = /[\p{L}\p{N}]+/gu

// stem is a light English stem, enough to mark "refunds" for "refund".
export function stem(w) {
  w = w.toLowerCase()
  for (const [end, to] of [['ies', 'y'], ['ing', ''], ['ed', ''], ['es', ''], ['s', '']]) {
    if (w.length > end.length + 2 && w.endsWith(end)) return w.slice(0, -end.length) + to
  }
  return w
}

// queryStems are the stems of a query's words, stop words left out.
export function queryStems(query) {
  const out = new Map() // stem → the word as asked
  for (const w of query.match(WORD) || []) {
    if (!STOP.has(w.toLowerCase())) out.set(stem(w), w.toLowerCase())
  }
  return out
}

// Marked renders text with the words whose stem is asked for in <mark>,
// as text nodes: the passage is never parsed as HTML.
function Marked({ text, stems }) {
  const parts = []
  let last = 0
  for (const m of text.matchAll(WORD)) {
    if (!stems.has(stem(m[0]))) continue
    if (m.index > last) parts.push(text.slice(last, m.index))
    parts.push(html`<mark>${m[0]}</mark>`)
    last = m.index + m[0].length
  }
  parts.push(text.slice(last))
  return parts
}

function matched(text, stems) {
  const found = new Set()
  for (const w of text.match(WORD) || []) {
    const s = stem(w)
    if (stems.has(s)) found.add(stems.get(s))
  }
  return [...stems.values()].map((w) => [w, found.has(w)])
}

const num = (n, d = 4) => (typeof n === 'number' ? n.toFixed(d) : '')

// Why shows a passage's explain object: the fused score's parts and the
// words that scored it, all as the server gave them.
function Why({ x }) {
  const t = x.fullText
  const v = x.vector
  return html`<div class="why">
    <table class="parts">
      <thead><tr><th scope="col">Ranking</th><th scope="col">Rank</th><th scope="col">Score</th><th scope="col">Adds</th></tr></thead>
      <tbody>
        <tr class="part-text"><th scope="row">Full text (BM25)</th>${t ? html`
          <td>${t.rank}</td><td>${num(t.score, 3)}${t.answerBoost ? html` <span class="muted" title="holds the kind of answer the question asks for">(answer ×1.5)</span>` : ''}</td><td>${num(t.fused)}</td>` : html`
          <td colspan="3" class="muted">not among its results</td>`}</tr>
        <tr class="part-vector"><th scope="row">Vector (×${num(x.vectorWeight, 2)})</th>${v ? html`
          <td>${v.rank}</td><td>similarity ${num(v.similarity, 3)}</td><td>${num(v.fused)}</td>` : html`
          <td colspan="3" class="muted">not among its results</td>`}</tr>
        <tr class="part-fused"><th scope="row">Fused</th><td></td><td></td><td>${num(x.score)}</td></tr>
      </tbody>
    </table>
    <div class="words">
      ${x.words.map((w) => html`<span class="hit" title=${'adds ' + num(w.score, 3) + ' to the BM25 score'}>✓ ${w.word} <small>${num(w.score, 2)}</small></span> `)}
      ${x.relatedWords.map((w) => html`<span class="related" title=${(w.source === 'rewrite' ? 'a word of the model\'s rewriting' : 'stands in for ' + w.for) + ', weight ' + w.weight}>≈ ${w.word}${w.for ? html` <span class="muted">for ${w.for}</span>` : html` <span class="muted">(rewrite)</span>`} <small>${num(w.score, 2)}</small></span> `)}
      ${x.missingWords.map((w) => html`<span class="miss" title="not in this passage or its headings">✗ ${w}</span> `)}
    </div>
  </div>`
}

export function SearchPage({ botId }) {
  const { bot, error: botError } = useBot(botId)
  const [query, setQuery] = useState('')
  const [tags, setTags] = useState('')
  const [limit, setLimit] = useState('10')
  const [result, setResult] = useState(null)
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)

  useEffect(() => {
    document.title = 'Search · botplatform'
  }, [])

  const search = async (e) => {
    e.preventDefault()
    setError(null)
    setBusy(true)
    const t = parseTags(tags)
    try {
      const r = await files(botId, 'GET', '/search', {
        query: { query, limit, includeBreadcrumb: 'true', explain: 'true', tags: Object.keys(t).length ? JSON.stringify(t) : undefined },
      })
      setResult({ query, passages: r.passages })
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  const stems = result ? queryStems(result.query) : new Map()
  return html`
    <${BotNav} bot=${bot} botId=${botId} page="search" />
    <form class="search" onSubmit=${search} role="search">
      <label for="search-query">Query</label>
      <input id="search-query" type="search" required value=${query} onInput=${(e) => setQuery(e.target.value)} placeholder="how long do refunds take" />
      <label for="search-tags">Tags</label>
      <input id="search-tags" class="short" value=${tags} onInput=${(e) => setTags(e.target.value)} placeholder="kind=faq" />
      <label for="search-limit">Passages</label>
      <select id="search-limit" value=${limit} onChange=${(e) => setLimit(e.target.value)}>
        ${['5', '10', '20', '50'].map((n) => html`<option value=${n}>${n}</option>`)}
      </select>
      <button type="submit" id="search-go" disabled=${busy}>Search</button>
    </form>
    <${ErrorText} error=${botError || error} id="search-error" />
    ${result && (result.passages.length === 0 ? html`<p class="muted" id="results">No passage matched.</p>` : html`
      <ol class="results" id="results">
        ${result.passages.map((p, i) => {
          const crumb = (p.context || []).find((c) => c.type === 'breadcrumb')
          return html`<li key=${i}>
            <div class="pmeta">
              <span class="rank">${i + 1}</span>
              <span class="score" title="fused rank score (higher is better)">score ${p.score.toFixed(4)}</span>
              <a href=${filePath(botId, p.file.id)} class="file"><code>${p.file.key}</code></a>
              ${p.meta.pageNumber && html`<span class="page">page ${p.meta.pageNumber}</span>`}
              ${crumb && crumb.text && html`<span class="breadcrumb">${crumb.text}</span>`}
            </div>
            <div class="ptext"><${Marked} text=${p.content} stems=${stems} /></div>
            ${p.explain ? html`<${Why} x=${p.explain} />` : html`
            <div class="words">${matched(p.content + ' ' + (crumb ? crumb.text : ''), stems).map(([w, yes]) =>
              html`<span class=${yes ? 'hit' : 'miss'} title=${yes ? 'in this passage or its headings' : 'not in this passage or its headings'}>${yes ? '✓' : '✗'} ${w}</span> `)}</div>`}
          </li>`
        })}
      </ol>`)}
    <p class="hint">The score is the server's fused ranking: 1 / (60 + full-text rank) + weight / (60 + vector rank).
      Under each passage, the two rankings' parts as the server ranked by them, and the words that scored it in the
      full-text ranking (✓ the query's, ≈ a related word standing in for one, ✗ one it does not hold).</p>`
}

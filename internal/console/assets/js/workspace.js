// The workspace: its members and their roles, the signed-in account's
// personal access tokens, quotas and usage as bars, and the audit log
// (administrators and the owner only; others see the server's 403).
import { html, useState, useEffect, useRef, ErrorText, when, size, Confirm, Bar } from './ui.js'
import { admin } from './api.js'
import { loadSession } from './session.js'

const ROLES = ['viewer', 'developer', 'manager', 'administrator']
const wsPath = () => '/workspaces/' + encodeURIComponent(loadSession().workspaceId)

function Members() {
  const [members, setMembers] = useState(null)
  const [error, setError] = useState(null)
  const [email, setEmail] = useState('')
  const [role, setRole] = useState('viewer')
  const roles = useRef({}) // each member's role, as last read or sent

  const reload = async () => {
    const out = []
    let nextToken
    do {
      const page = await admin('GET', '/workspace-members', { query: { pageSize: 100, nextToken } })
      out.push(...page.members)
      nextToken = page.meta && page.meta.nextToken
    } while (nextToken)
    roles.current = Object.fromEntries(out.map((m) => [m.id, m.role]))
    setMembers(out)
  }
  // act runs a change, then shows the members as they now are.
  const act = (p) => p.then(() => setError(null), setError).then(reload).catch(setError)
  useEffect(() => {
    reload().catch(setError)
  }, [])

  const add = (e) => {
    e.preventDefault()
    act(admin('POST', '/workspace-members', { body: { email: email.trim(), role } }).then(() => setEmail('')))
  }
  // setMemberRole sends a change once: a select can report one twice.
  const setMemberRole = (m, r) => {
    if (roles.current[m.id] === r) return
    roles.current[m.id] = r
    act(admin('PUT', '/workspace-members/' + encodeURIComponent(m.id), { body: { role: r } }))
  }
  const remove = (m) => act(admin('DELETE', '/workspace-members/' + encodeURIComponent(m.id), { body: {} }))

  return html`<section aria-labelledby="members-h">
    <h2 id="members-h" class="section-title">Members</h2>
    <${ErrorText} error=${error} id="members-error" />
    ${members === null ? html`<p class="muted">Loading…</p>` : html`
      <table class="list" id="members">
        <thead><tr><th scope="col">Email</th><th scope="col">Since</th><th scope="col">Role</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
        <tbody>
          ${members.map((m) => html`<tr key=${m.id} data-email=${m.email}>
            <td>${m.email}${m.displayName && html` <span class="muted">${m.displayName}</span>`}</td>
            <td>${when(m.createdAt)}</td>
            <td>${m.role === 'owner' ? html`<span class="role">owner</span>` : html`
              <select class="role" aria-label=${'Role of ' + m.email} value=${m.role} onChange=${(e) => setMemberRole(m, e.target.value)}>
                ${(ROLES.includes(m.role) ? ROLES : ROLES.concat(m.role)).map((r) => html`<option value=${r}>${r}</option>`)}
              </select>`}</td>
            <td class="actions">${m.role !== 'owner' && html`<${Confirm} label="Remove" question=${'Remove ' + m.email + '?'} onConfirm=${() => remove(m)} />`}</td>
          </tr>`)}
        </tbody>
      </table>`}
    <form class="inline" onSubmit=${add}>
      <label for="member-email">Add a member</label>
      <input id="member-email" type="email" required placeholder="email" value=${email} onInput=${(e) => setEmail(e.target.value)} />
      <select id="member-role" aria-label="Role" value=${role} onChange=${(e) => setRole(e.target.value)}>
        ${ROLES.map((r) => html`<option value=${r}>${r}</option>`)}
      </select>
      <button type="submit" id="add-member">Add</button>
    </form>
    <p class="hint">A new member signs in with a token the operator gives them (<code>botplatform token --email …</code>).</p>
  </section>`
}

function Tokens() {
  const [pats, setPats] = useState(null)
  const [error, setError] = useState(null)
  const [note, setNote] = useState('')
  const [created, setCreated] = useState(null)

  const reload = () => admin('GET', '/account/pats').then((r) => setPats(r.pats), setError)
  useEffect(() => {
    reload()
  }, [])
  const create = (e) => {
    e.preventDefault()
    setError(null)
    admin('POST', '/account/pats', { body: { note: note.trim() } }).then((r) => {
      setCreated(r.pat)
      setNote('')
      return reload()
    }).catch(setError)
  }
  const remove = (p) => {
    setCreated(null)
    admin('DELETE', '/account/pats/' + encodeURIComponent(p.id), { body: {} }).then(reload).catch(setError)
  }

  return html`<section aria-labelledby="pats-h">
    <h2 id="pats-h" class="section-title">Your personal access tokens</h2>
    <${ErrorText} error=${error} id="pats-error" />
    ${created && html`<div class="once" id="new-pat" role="status">
      <p>The token <strong>${created.note}</strong>, shown this once: copy it now.</p>
      <input readonly class="token" id="new-pat-value" value=${created.value} onFocus=${(e) => e.target.select()} aria-label="New token" />
      <button type="button" class="link" onClick=${() => setCreated(null)}>Done</button>
    </div>`}
    ${pats === null ? html`<p class="muted">Loading…</p>` : html`
      <table class="list" id="pats">
        <thead><tr><th scope="col">Note</th><th scope="col">Id</th><th scope="col">Created</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
        <tbody>
          ${pats.map((p) => html`<tr key=${p.id} data-note=${p.note}>
            <td>${p.note || html`<span class="muted">(no note)</span>`}</td>
            <td><code>${p.id}</code></td>
            <td>${when(p.createdAt)}</td>
            <td class="actions"><${Confirm} label="Delete" question="Delete this token? Whatever uses it stops working." onConfirm=${() => remove(p)} /></td>
          </tr>`)}
        </tbody>
      </table>`}
    <form class="inline" onSubmit=${create}>
      <label for="pat-note">New token</label>
      <input id="pat-note" required placeholder="note: what it is for" value=${note} onInput=${(e) => setNote(e.target.value)} />
      <button type="submit" id="create-pat">Create</button>
    </form>
  </section>`
}

// USAGES are the limits shown as bars, and how their numbers read.
const USAGES = [
  ['file_storage_bytes', 'File storage', size],
  ['knowledgebase_vector_storage', 'Vector storage', size],
  ['ai_spend', 'AI Spend this month', (n) => '$' + Number(n).toFixed(2)],
]

// dailySpend sums listUsageActivityDaily's items by date ("2006-01-02"),
// every page of them.
async function dailySpend(id) {
  const byDay = {}
  let nextToken
  do {
    const page = await admin('GET', '/usages/' + encodeURIComponent(id) + '/daily-activity', { query: { type: 'ai_spend', pageSize: 1000, nextToken } })
    for (const d of page.data) byDay[d.date] = (byDay[d.date] || 0) + d.value
    nextToken = page.meta && page.meta.nextToken
  } while (nextToken)
  return byDay
}

// SpendChart is a bar a day of this month (UTC): AI Spend from
// listUsageActivityDaily, drawn as plain SVG; the numbers are in each
// bar's title and in a table for screen readers.
function SpendChart({ workspaceId }) {
  const [byDay, setByDay] = useState(null)
  const [error, setError] = useState(null)
  useEffect(() => {
    dailySpend(workspaceId).then(setByDay, setError)
  }, [workspaceId])
  if (error) return html`<${ErrorText} error=${error} />`
  if (!byDay) return html`<p class="muted">Loading…</p>`
  const now = new Date()
  const y = now.getUTCFullYear()
  const m = now.getUTCMonth()
  const n = new Date(Date.UTC(y, m + 1, 0)).getUTCDate()
  const days = Array.from({ length: n }, (_, i) => new Date(Date.UTC(y, m, i + 1)).toISOString().slice(0, 10))
  const top = Math.max(0, ...days.map((d) => byDay[d] || 0))
  const W = 10
  const H = 60
  const money = (v) => '$' + v.toFixed(v > 0 && v < 0.01 ? 4 : 2)
  const total = days.reduce((s, d) => s + (byDay[d] || 0), 0)
  return html`<figure class="spend-chart" id="ai-spend-chart">
    <figcaption><span>AI Spend by day, ${days[0].slice(0, 7)} (UTC)</span><span class="muted">highest ${money(top)}</span></figcaption>
    <svg viewBox=${'0 0 ' + n * W + ' ' + H} preserveAspectRatio="none" aria-hidden="true" focusable="false">
      <line class="axis" x1="0" y1=${H - 0.5} x2=${n * W} y2=${H - 0.5} />
      ${days.map((d, i) => {
        const v = byDay[d] || 0
        const h = top > 0 ? Math.max(v > 0 ? 1.5 : 0, ((H - 2) * v) / top) : 0
        return html`<rect key=${d} class=${d === now.toISOString().slice(0, 10) ? 'today' : ''} data-date=${d} data-value=${v}
          x=${i * W + 1.5} y=${H - 1 - h} width=${W - 3} height=${h}><title>${d}: ${money(v)}</title></rect>`
      })}
    </svg>
    <div class="chart-axis muted"><span>${days[0].slice(8)}</span><span>${days[n - 1].slice(8)}</span></div>
    <table class="sr" id="ai-spend-days">
      <caption>AI Spend by day</caption>
      <thead><tr><th scope="col">Day</th><th scope="col">Dollars</th></tr></thead>
      <tbody>${days.filter((d) => byDay[d]).map((d) => html`<tr><td>${d}</td><td>${money(byDay[d])}</td></tr>`)}</tbody>
    </table>
    ${total === 0 && html`<p class="hint">Nothing spent this month yet.</p>`}
  </figure>`
}

function Usage() {
  const [usages, setUsages] = useState(null)
  const [quotas, setQuotas] = useState([])
  const [error, setError] = useState(null)
  useEffect(() => {
    admin('GET', wsPath() + '/quotas').then((r) => setQuotas(r.quotas), setError)
    Promise.all(USAGES.map(([type]) => admin('GET', wsPath() + '/usages', { query: { type } }).then((r) => r.usages[0])))
      .then(setUsages, setError)
  }, [])
  const max = quotas.find((q) => q.type === 'file_max_size_bytes')
  return html`<section aria-labelledby="usage-h">
    <h2 id="usage-h" class="section-title">Quotas and usage</h2>
    <${ErrorText} error=${error} />
    ${usages === null ? html`<p class="muted">Loading…</p>` : html`<div class="bars" id="usage">
      ${usages.map((u, i) => {
        const [type, label, fmt] = USAGES[i]
        return html`<${Bar} key=${type} id=${'usage-' + type} label=${label} value=${u.value} max=${u.quota}
          text=${fmt(u.value) + ' of ' + fmt(u.quota)} />`
      })}
      <${SpendChart} workspaceId=${loadSession().workspaceId} />
      ${max && html`<p class="hint">Largest file: ${size(max.value)}. Period ${usages[0] && usages[0].period}.</p>`}
    </div>`}
  </section>`
}

function Audit() {
  const [records, setRecords] = useState(null)
  const [next, setNext] = useState(undefined)
  const [error, setError] = useState(null)
  const more = (token) =>
    admin('GET', wsPath() + '/audit-records', { query: { pageSize: 10, nextToken: token } }).then((r) => {
      setRecords((old) => (token && old ? old.concat(r.records) : r.records))
      setNext(r.meta && r.meta.nextToken)
    }, (err) => {
      setError(err)
      setRecords((old) => old || [])
    })
  useEffect(() => {
    more()
  }, [])
  return html`<section aria-labelledby="audit-h">
    <div class="section-head">
      <h2 id="audit-h">Audit log</h2>
      <button type="button" id="audit-refresh" onClick=${() => more()}>Refresh</button>
    </div>
    ${error && error.status === 403 ? html`<p class="muted" id="audit-forbidden">Only administrators and the owner can read the audit log.</p>` : html`<${ErrorText} error=${error} />`}
    ${records === null ? html`<p class="muted">Loading…</p>` : records.length > 0 && html`
      <table class="list" id="audit">
        <thead><tr><th scope="col">When</th><th scope="col">Who</th><th scope="col">Action</th><th scope="col">What</th></tr></thead>
        <tbody>
          ${records.map((r) => html`<tr key=${r.id}>
            <td><time datetime=${r.recordedAt}>${when(r.recordedAt)}</time></td>
            <td>${r.userEmail || r.userId || html`<span class="muted">the server</span>`}</td>
            <td><code>${r.action}</code></td>
            <td>${r.resourceName || r.resourceId}${r.value && html`<div class="muted">${r.value}</div>`}</td>
          </tr>`)}
        </tbody>
      </table>
      ${next && html`<button type="button" id="audit-more" onClick=${() => more(next)}>Older records</button>`}`}
  </section>`
}

export function WorkspacePage() {
  useEffect(() => {
    document.title = 'Workspace · botplatform'
  }, [])
  const s = loadSession()
  return html`
    <h1>${s.workspaceName || 'Workspace'}</h1>
    <p class="muted"><code>${s.workspaceId}</code></p>
    <div class="columns even">
      <div><${Usage} /><${Tokens} /></div>
      <div><${Members} /></div>
    </div>
    <${Audit} />`
}

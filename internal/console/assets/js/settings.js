// A bot's settings: what the Admin API's bot object carries that a person
// edits (name, description, tags, the longest run, configuration data), its
// declared definition (read only),
// the hosts its code may fetch from, its secrets (write-only: the API
// returns their names, never a value, and the page never shows one), and
// deleting the bot.
import { html, useState, useEffect, ErrorText, when, go, Confirm } from './ui.js'
import { admin } from './api.js'
import { BotNav, useBot } from './botnav.js'

const botPath = (id) => '/bots/' + encodeURIComponent(id)

// tagsText writes tags one "key=value" a line; parseLines reads them back.
const tagsText = (tags) => Object.entries(tags || {}).map(([k, v]) => k + '=' + v).join('\n')

function parseLines(text) {
  const out = {}
  for (const line of text.split('\n')) {
    if (!line.trim()) continue
    const i = line.indexOf('=')
    if (i <= 0) throw new Error('tags: each line is key=value; "' + line.trim() + '" is not')
    out[line.slice(0, i).trim()] = line.slice(i + 1).trim()
  }
  return out
}

function General({ bot, onSaved }) {
  const [name, setName] = useState(bot.name)
  const [description, setDescription] = useState(bot.description || '')
  const [tags, setTags] = useState(tagsText(bot.tags))
  const [maxTime, setMaxTime] = useState(bot.maxExecutionTime ? String(bot.maxExecutionTime) : '')
  const [data, setData] = useState(JSON.stringify((bot.configuration && bot.configuration.data) || {}, null, 2))
  const [error, setError] = useState(null)
  const [notice, setNotice] = useState('')

  const save = async (e) => {
    e.preventDefault()
    setError(null)
    setNotice('')
    const body = { name: name.trim(), description }
    try {
      const next = parseLines(tags)
      body.tags = { ...next }
      for (const k of Object.keys(bot.tags || {})) if (!(k in next)) body.tags[k] = null // removed
      let parsed
      try {
        parsed = JSON.parse(data || '{}')
      } catch (err) {
        throw new Error('configuration data: not JSON: ' + err.message)
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('configuration data: must be a JSON object')
      body.configuration = { data: parsed }
      if (maxTime.trim()) body.maxExecutionTime = Number(maxTime)
    } catch (err) {
      setError(err)
      return
    }
    try {
      await admin('PUT', botPath(bot.id), { body })
      setNotice('Saved.')
      onSaved()
    } catch (err) {
      setError(err)
    }
  }

  return html`<section aria-labelledby="general-h">
    <h2 id="general-h" class="section-title">Bot</h2>
    <form class="settings" onSubmit=${save}>
      <label for="set-name">Name</label>
      <input id="set-name" required value=${name} onInput=${(e) => setName(e.target.value)} />
      <label for="set-description">Description</label>
      <textarea id="set-description" rows="2" maxlength="2000" value=${description} onInput=${(e) => setDescription(e.target.value)}></textarea>
      <label for="set-tags">Tags <span class="muted">(key=value, one a line)</span></label>
      <textarea id="set-tags" rows="3" class="mono" spellcheck="false" value=${tags} onInput=${(e) => setTags(e.target.value)}></textarea>
      <label for="set-max-time">Longest run <span class="muted">(seconds, maxExecutionTime)</span></label>
      <input id="set-max-time" type="number" class="short" value=${maxTime} onInput=${(e) => setMaxTime(e.target.value)} placeholder="default" />
      <label for="set-config">Configuration data <span class="muted">(JSON, the code's ctx.configuration)</span></label>
      <textarea id="set-config" rows="6" class="mono" spellcheck="false" value=${data} onInput=${(e) => setData(e.target.value)}></textarea>
      <div><button type="submit" id="save-settings">Save</button></div>
    </form>
    <${ErrorText} error=${error} id="settings-error" />
    ${notice && html`<p class="notice" role="status" id="settings-notice">${notice}</p>`}
  </section>`
}

function FetchHosts({ botId }) {
  const [hosts, setHosts] = useState(null)
  const [error, setError] = useState(null)
  const [notice, setNotice] = useState('')
  useEffect(() => {
    admin('GET', botPath(botId) + '/fetch').then((r) => setHosts(r.hosts.join('\n')), setError)
  }, [botId])
  const save = async (e) => {
    e.preventDefault()
    setError(null)
    setNotice('')
    try {
      const r = await admin('PUT', botPath(botId) + '/fetch', { body: { hosts: hosts.split('\n').map((h) => h.trim()).filter(Boolean) } })
      setHosts(r.hosts.join('\n'))
      setNotice('Saved.')
    } catch (err) {
      setError(err)
    }
  }
  return html`<section aria-labelledby="fetch-h">
    <h2 id="fetch-h" class="section-title">Hosts its code may fetch from</h2>
    ${hosts === null ? html`<p class="muted">Loading…</p>` : html`
      <form class="settings" onSubmit=${save}>
        <label for="set-fetch">One host a line <span class="muted">(api.example.com, *.example.com)</span></label>
        <textarea id="set-fetch" rows="3" class="mono" spellcheck="false" value=${hosts} onInput=${(e) => setHosts(e.target.value)}></textarea>
        <div><button type="submit" id="save-fetch">Save hosts</button></div>
      </form>`}
    <${ErrorText} error=${error} id="fetch-error" />
    ${notice && html`<p class="notice" role="status" id="fetch-notice">${notice}</p>`}
  </section>`
}

// Secrets are write-only: the list holds names; a value is typed into a
// password field, sent once (updateBot's secrets), and the field emptied.
function Secrets({ bot, onSaved }) {
  const [name, setName] = useState('')
  const [value, setValue] = useState('')
  const [replacing, setReplacing] = useState('')
  const [error, setError] = useState(null)
  const [notice, setNotice] = useState('')

  const send = async (secrets, done) => {
    setError(null)
    setNotice('')
    try {
      await admin('PUT', botPath(bot.id), { body: { secrets } })
      setNotice(done)
      onSaved()
      return true
    } catch (err) {
      setError(err)
      return false
    }
  }
  const add = async (e) => {
    e.preventDefault()
    const n = (replacing || name).trim()
    if (await send({ [n]: value }, 'Secret ' + n + ' set.')) {
      setName('')
      setReplacing('')
    }
    setValue('') // never kept in the page, sent or not
  }
  return html`<section aria-labelledby="secrets-h">
    <h2 id="secrets-h" class="section-title">Secrets</h2>
    <p class="hint">The code reads them as <code>ctx.secrets</code> (an SDK bot as <code>SECRET_…</code> variables). Their values are
      never shown again, here or by any API: to change one, set it anew.</p>
    ${bot.secrets.length === 0 ? html`<p class="muted" id="secrets-none">No secrets.</p>` : html`
      <table class="list" id="secrets">
        <thead><tr><th scope="col">Name</th><th scope="col">Value</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
        <tbody>
          ${bot.secrets.map((s) => html`<tr key=${s} data-secret=${s}>
            <td><code>${s}</code></td>
            <td class="muted">set (hidden)</td>
            <td class="actions">
              <button type="button" onClick=${() => {
                setReplacing(s)
                setValue('')
                document.getElementById('secret-value')?.focus()
              }} aria-label=${'Replace ' + s}>Replace</button>
              <${Confirm} label="Delete" question=${'Delete the secret ' + s + '?'} onConfirm=${() => send({ [s]: null }, 'Secret ' + s + ' deleted.')} />
            </td>
          </tr>`)}
        </tbody>
      </table>`}
    <form class="inline" onSubmit=${add} autocomplete="off">
      ${replacing ? html`<span>New value of <code id="secret-replacing">${replacing}</code></span>` : html`
        <label for="secret-name" class="sr">Secret name</label>
        <input id="secret-name" required placeholder="NAME" pattern="[A-Za-z_][A-Za-z0-9_]*" title="letters, digits and _, not starting with a digit"
          value=${name} onInput=${(e) => setName(e.target.value)} spellcheck="false" />`}
      <label for="secret-value" class="sr">Secret value</label>
      <input id="secret-value" type="password" required placeholder="value" autocomplete="new-password" value=${value} onInput=${(e) => setValue(e.target.value)} />
      <button type="submit" id="set-secret">${replacing ? 'Replace' : 'Set secret'}</button>
      ${replacing && html`<button type="button" class="link" onClick=${() => { setReplacing(''); setValue('') }}>Cancel</button>`}
    </form>
    <${ErrorText} error=${error} id="secrets-error" />
    ${notice && html`<p class="notice" role="status" id="secrets-notice">${notice}</p>`}
  </section>`
}

// WebsiteChat: the embed code of the chat widget (getBotWebchat) and the
// web origins allowed to use the bot's Chat API from a browser
// (integrations.chat.configuration.allowedOrigins, docs/webchat.md).
function WebsiteChat({ bot, chat, onSaved }) {
  const saved = ((chat && chat.configuration && chat.configuration.allowedOrigins) || []).join('\n')
  const [origins, setOrigins] = useState(saved)
  const [code, setCode] = useState(null)
  const [error, setError] = useState(null)
  const [notice, setNotice] = useState('')
  useEffect(() => {
    admin('GET', botPath(bot.id) + '/webchat', { query: { type: 'preconfigured' } }).then((r) => setCode(r.code), setError)
  }, [bot.id])
  const save = async (e) => {
    e.preventDefault()
    setError(null)
    setNotice('')
    const list = origins.split('\n').map((o) => o.trim()).filter(Boolean)
    try {
      await admin('PUT', botPath(bot.id), { body: { integrations: { chat: { configuration: { allowedOrigins: list.length ? list : null } } } } })
      setNotice('Saved.')
      onSaved()
    } catch (err) {
      setError(err)
    }
  }
  return html`<section aria-labelledby="webchat-h">
    <h2 id="webchat-h" class="section-title">Website chat</h2>
    <p class="hint">Paste this into a page to open a chat bubble that talks to the bot; the page's origin must be listed
      below (see <code>docs/webchat.md</code>).</p>
    ${code === null ? html`<p class="muted">Loading…</p>` : html`<pre class="embed" id="webchat-code" tabindex="0">${code}</pre>`}
    <form class="settings" onSubmit=${save}>
      <label for="set-origins">Allowed origins, one a line <span class="muted">(https://shop.example.com, https://*.example.org, *)</span></label>
      <textarea id="set-origins" rows="3" class="mono" spellcheck="false" value=${origins} onInput=${(e) => setOrigins(e.target.value)}></textarea>
      <div><button type="submit" id="save-origins">Save origins</button></div>
    </form>
    <${ErrorText} error=${error} id="webchat-error" />
    ${notice && html`<p class="notice" role="status" id="webchat-notice">${notice}</p>`}
  </section>`
}

// DEFINITION are the parts of the bot object that its code or `bp deploy`
// declares: shown as they are, not edited here.
const DEFINITION = [
  ['configuration schema', (b) => b.configuration && b.configuration.schema],
  ['states', (b) => b.states], ['events', (b) => b.events], ['actions', (b) => b.actions],
  ['recurring events', (b) => b.recurringEvents], ['subscriptions', (b) => b.subscriptions],
  ['user tags', (b) => b.user && b.user.tags], ['conversation tags', (b) => b.conversation && b.conversation.tags],
  ['message tags', (b) => b.message && b.message.tags],
]

function Definition({ bot }) {
  const parts = DEFINITION.map(([name, get]) => [name, get(bot)]).filter(([, v]) => v && Object.keys(v).length > 0)
  return html`<section aria-labelledby="definition-h">
    <h2 id="definition-h" class="section-title">Definition</h2>
    <p class="hint">What the bot declares (its code, or <code>bp deploy</code>), as <code>getBot</code> returns it.</p>
    ${parts.length === 0 ? html`<p class="muted" id="definition-none">Nothing declared.</p>` : parts.map(([name, v]) => html`
      <details class="definition" data-part=${name}>
        <summary>${name} <span class="muted">(${Object.keys(v).length})</span></summary>
        <pre>${JSON.stringify(v, null, 2)}</pre>
      </details>`)}
  </section>`
}

export function SettingsPage({ botId }) {
  const { bot, error, reload } = useBot(botId)
  const [delError, setDelError] = useState(null)
  useEffect(() => {
    document.title = 'Settings · botplatform'
  }, [])
  const remove = async () => {
    setDelError(null)
    try {
      await admin('DELETE', botPath(botId), { body: {} })
      go('/bots')
    } catch (err) {
      setDelError(err)
    }
  }
  const chat = bot && Object.values(bot.integrations || {}).find((i) => i.name === 'chat')
  return html`
    <${BotNav} bot=${bot} botId=${botId} page="settings" />
    <${ErrorText} error=${error} />
    ${bot && html`
      <dl class="facts" id="bot-facts">
        <dt>Id</dt><dd><code>${bot.id}</code></dd>
        <dt>Type</dt><dd>${bot.type}${bot.dev ? ' (development bot)' : ''}</dd>
        <dt>Created</dt><dd>${when(bot.createdAt)}</dd>
        <dt>Updated</dt><dd>${when(bot.updatedAt)}</dd>
        ${chat && html`<dt>Chat API</dt><dd><code>${chat.webhookUrl}</code></dd>`}
      </dl>
      <div class="columns even">
        <div><${General} key=${bot.id} bot=${bot} onSaved=${reload} /><${Definition} bot=${bot} /></div>
        <div>
          <${Secrets} bot=${bot} onSaved=${reload} />
          <${FetchHosts} botId=${botId} />
          <${WebsiteChat} key=${bot.id} bot=${bot} chat=${chat} onSaved=${reload} />
          <section aria-labelledby="danger-h">
            <h2 id="danger-h" class="section-title">Delete the bot</h2>
            <p class="hint">Its code, versions, files, conversations, tables and logs go with it.</p>
            <${Confirm} id="delete-bot" label="Delete" question=${'Delete the bot ' + bot.name + ' and all its data?'} onConfirm=${remove} />
            <${ErrorText} error=${delError} id="delete-bot-error" />
          </section>
        </div>
      </div>`}`
}

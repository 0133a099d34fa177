// A bot's installed integrations, read only: getBot's integrations, keyed
// by alias, each with its title and version, whether it is enabled, its
// registration status (and why it failed), its webhook URL to copy, its
// configuration with the secrets masked, and a link to its log lines.
// Nothing here writes, so a viewer sees the same page; installing is
// updateBot's (docs/integrations.md).
import { html, useState, useEffect, useRef, ErrorText, when } from './ui.js'
import { admin } from './api.js'
import { BotNav, useBot } from './botnav.js'
import { logsHref } from './logs.js'

// BUILT_IN are the ids of the integrations the server itself runs (chat,
// and the LLM's openai): no process of theirs writes log lines of its own.
const BUILT_IN = new Set(['chat', 'intver_01builtinopenai00000000'])

// SECRET_NAME is a configuration key that looks like it names a secret.
const SECRET_NAME = /token|secret|password|key|credential/i

// branches are a schema's alternatives and parts, where a property's
// marks may be (a nullable field is anyOf [its schema, null]).
const branches = (s) => [...(s.anyOf || []), ...(s.oneOf || []), ...(s.allOf || [])]

// markedSecret tells whether a property's schema says it is a secret:
// @botpress/sdk's secret() (x-zui.secret) or a password field.
function markedSecret(s) {
  if (!s || typeof s !== 'object') return false
  return (s['x-zui'] && s['x-zui'].secret === true) || s.format === 'password' || branches(s).some(markedSecret)
}

// propertySchema is the schema of an object's property key, or undefined.
function propertySchema(s, key) {
  if (!s || typeof s !== 'object') return undefined
  if (s.properties && s.properties[key]) return s.properties[key]
  for (const b of branches(s)) {
    const p = propertySchema(b, key)
    if (p) return p
  }
  return typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined
}

// mask shows a secret as •••• and, when that still hides most of it, its
// last 4 characters.
const mask = (s) => '••••' + (s.length >= 12 ? s.slice(-4) : '')

// shown is a plain value as the page writes it.
function shown(v, secret) {
  if (v === '') return '(empty)'
  if (secret && (typeof v === 'string' || typeof v === 'number')) return mask(String(v))
  return typeof v === 'string' ? v : JSON.stringify(v)
}

// configRows flattens a configuration into [path, text, masked] rows. A
// value is masked when its key (or an enclosing one) looks secret, or its
// schema (or an enclosing one) marks it secret. A list of plain values is
// one row; lists of objects are flattened too, so no secret is left in a
// JSON dump.
function configRows(value, schema, path = '', secret = false, out = []) {
  if (Array.isArray(value)) {
    const items = schema && schema.items
    const s = secret || markedSecret(items)
    if (value.some((v) => v !== null && typeof v === 'object')) {
      value.forEach((v, i) => configRows(v, items, path + '[' + i + ']', s, out))
    } else {
      out.push([path, value.length ? value.map((v) => shown(v, s)).join(', ') : '(none)', s && value.length > 0])
    }
  } else if (value && typeof value === 'object') {
    if (path && Object.keys(value).length === 0) out.push([path, '{}', false])
    for (const [k, v] of Object.entries(value)) {
      const sub = propertySchema(schema, k)
      configRows(v, sub, path ? path + '.' + k : k, secret || SECRET_NAME.test(k) || markedSecret(sub), out)
    }
  } else {
    out.push([path, shown(value, secret), secret && value !== ''])
  }
  return out
}

// definition loads an integration version: the workspace's own
// (getIntegration), else the hub's (getPublicIntegrationById). null when
// neither answers: secrets are then known by their keys' names alone.
async function definition(id) {
  const path = '/integrations/' + encodeURIComponent(id)
  for (const p of [path, '/hub' + path]) {
    try {
      return (await admin('GET', p)).integration
    } catch {
      // not there: the hub's, or none
    }
  }
  return null
}

// configSchema is the schema of an installation's configuration: the one
// its configurationType names, or the version's default one.
function configSchema(def, type) {
  const c = def && (type ? def.configurations && def.configurations[type] : def.configuration)
  return c && c.schema
}

// Copy puts text on the clipboard with the Clipboard API, which only a
// secure context has (https, or localhost); elsewhere it selects the text
// (in the element of target) and asks the browser to copy the selection.
function Copy({ text, target, label }) {
  const [done, setDone] = useState('')
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setDone('Copied.')
    } catch {
      const range = document.createRange()
      range.selectNodeContents(target.current)
      getSelection().removeAllRanges()
      getSelection().addRange(range)
      setDone(document.execCommand('copy') ? 'Copied.' : 'Selected: press Ctrl+C (⌘C) to copy.')
    }
  }
  return html`<button type="button" class="copy" onClick=${copy} aria-label=${label}>Copy</button>
    <span class="notice copied" role="status">${done}</span>`
}

// hidden: the bot's secrets are not shown to this member (a viewer: the
// API gives no signing secret, and no configuration of a deployed
// integration).
function Installation({ botId, alias, it, def, hidden }) {
  const url = useRef()
  const builtIn = BUILT_IN.has(it.id)
  const failed = it.status === 'registration_failed'
  const icon = it.iconUrl && it.iconUrl.startsWith('data:image/') // the CSP loads no other
  const config = def === undefined ? null : configRows(it.configuration || {}, configSchema(def, it.configurationType))
  return html`<li class=${'integration' + (failed ? ' failed' : '')} data-integration=${alias}>
    <div class="integration-head">
      ${icon && html`<img src=${it.iconUrl} alt="" width="28" height="28" />`}
      <h3>${it.title || it.name}</h3>
      <code class="integration-version">${it.name}@${it.version}</code>
      ${builtIn && html`<span class="badge">built in</span>`}
    </div>
    <dl class="facts">
      <dt>Installed as</dt><dd><code>${alias}</code></dd>
      <dt>Enabled</dt><dd class=${'integration-enabled ' + (it.enabled ? 'on' : 'off')}>${it.enabled ? 'enabled' : 'disabled'}</dd>
      <dt>Status</dt><dd><span class=${'status integration-status st-' + it.status}>${failed ? 'registration failed' : it.status}</span></dd>
      ${it.configurationType && html`<dt>Configuration type</dt><dd><code>${it.configurationType}</code></dd>`}
      ${it.disabledChannels && it.disabledChannels.length > 0 && html`
        <dt>Disabled channels</dt><dd>${it.disabledChannels.map((c) => html`<span class="tag">${c}</span> `)}</dd>`}
      <dt>Webhook URL</dt>
      <dd>${it.webhookUrl ? html`<code class="webhook-url" ref=${url}>${it.webhookUrl}</code>
        <${Copy} text=${it.webhookUrl} target=${url} label=${'Copy the webhook URL of ' + alias} />` : html`<span class="muted">none: it receives no webhooks</span>`}</dd>
      <dt>Updated</dt><dd>${when(it.updatedAt)}</dd>
    </dl>
    ${failed && html`<p class="error integration-reason">Registration failed: ${it.statusReason || 'no reason given'}</p>`}
    <h4 class="config-title">Configuration</h4>
    ${hidden && !builtIn ? html`<p class="muted config-hidden">Not shown: developers and above see an integration's configuration.</p>`
      : config === null ? html`<p class="muted">Loading…</p>` : config.length === 0 ? html`<p class="muted">None.</p>` : html`
      <dl class="config">
        ${config.map(([k, v, masked]) => html`<dt><code>${k}</code></dt>
          <dd class=${masked ? 'masked' : ''} title=${masked ? 'a secret: hidden here' : undefined}>${v}</dd>`)}
      </dl>`}
    ${def === null && html`<p class="hint">Its definition could not be read: values are masked by their keys' names alone.</p>`}
    ${!builtIn && html`<p><a class="integration-logs" href=${logsHref(botId, '[' + alias + ']')}>Its log lines</a></p>`}
  </li>`
}

export function IntegrationsPage({ botId }) {
  const { bot, error, reload } = useBot(botId, true)
  const [defs, setDefs] = useState({}) // integration version id → its definition, or null
  useEffect(() => {
    document.title = 'Integrations · botplatform'
  }, [])
  useEffect(() => {
    if (!bot) return
    let stopped = false
    for (const id of new Set(Object.values(bot.integrations).map((i) => i.id))) {
      definition(id).then((d) => {
        if (!stopped) setDefs((old) => ({ ...old, [id]: d }))
      })
    }
    return () => {
      stopped = true
    }
  }, [bot])

  // The deployed ones first, by alias; the built-in ones after them.
  const list = bot ? Object.entries(bot.integrations).sort(([a, x], [b, y]) => BUILT_IN.has(x.id) - BUILT_IN.has(y.id) || a.localeCompare(b)) : []
  return html`
    <${BotNav} bot=${bot} botId=${botId} page="integrations" />
    <${ErrorText} error=${error} />
    <section aria-labelledby="integrations-h">
      <div class="section-head">
        <h2 id="integrations-h">Installed integrations</h2>
        <button type="button" id="integrations-refresh" onClick=${reload}>Refresh</button>
      </div>
      <p class="hint">What the bot has installed, as <code>getBot</code> returns it. Integrations are installed and
        configured with <code>updateBot</code>; this page only shows them, secrets masked.</p>
      ${bot === null ? !error && html`<p class="muted">Loading…</p>` : html`
        ${!list.some(([, it]) => !BUILT_IN.has(it.id)) && html`<p class="muted" id="integrations-none">No integration is
          installed besides the built-in ones. To install one, deploy it (<code>bp deploy</code>) and add it to the bot
          with <code>updateBot</code>: see <code>docs/integrations.md</code>, “Installing an integration in a bot”.</p>`}
        <ul class="integrations" id="integrations">
          ${list.map(([alias, it]) => html`<${Installation} key=${alias} botId=${botId} alias=${alias} it=${it} def=${defs[it.id]}
            hidden=${!bot.signingSecret} />`)}
        </ul>`}
    </section>`
}

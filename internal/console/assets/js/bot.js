// A bot: its code in the editor, deploy, its versions (deploy one again)
// and its logs, live.
import { html, useState, useEffect, ErrorText, when } from './ui.js'
import { admin } from './api.js'
import { CodeEditor } from './editor.js'
import { BotNav, useBot } from './botnav.js'
import { Logs, logsHref } from './logs.js'

const botPath = (id) => '/bots/' + encodeURIComponent(id)

// currentCode is the code the bot runs: that of the newest version marked
// current by listBotVersions, read from the version's signed document.
async function versionCode(botId, versionId) {
  const { url } = await admin('GET', botPath(botId) + '/versions/' + encodeURIComponent(versionId))
  const u = new URL(url, location.origin) // on this origin, whatever host the server names
  const res = await fetch(u.pathname + u.search, { credentials: 'omit', cache: 'no-store' })
  if (!res.ok) throw new Error('loading the version: HTTP ' + res.status)
  return (await res.json()).bot.code
}

// errorLine finds the line of a syntax error in the API's message
// ("… line 2, column 13").
function errorLine(err) {
  const m = err && /line (\d+)/.exec(err.message)
  return m ? Number(m[1]) : 0
}

// logFilter is the text the logs are kept to, from the page's address: a
// link may lead to the logs filtered (an integration's, say), and a filter
// typed here is kept there, replacing the address rather than adding to
// the history at each change.
export function BotPage({ botId, logFilter }) {
  const { bot, error: botError, reload: reloadBot } = useBot(botId)
  const [versions, setVersions] = useState(null)
  const [code, setCode] = useState(null)
  const [error, setError] = useState(null)
  const [notice, setNotice] = useState('')
  const [busy, setBusy] = useState(false)

  const loadVersions = async () => {
    const { versions } = await admin('GET', botPath(botId) + '/versions')
    setVersions(versions)
    return versions
  }
  useEffect(() => {
    document.title = 'Bot · botplatform'
    loadVersions()
      .then((vs) => {
        const cur = vs.find((v) => v.current)
        return cur ? versionCode(botId, cur.id) : ''
      })
      .then(setCode)
      .catch((err) => {
        setError(err)
        setCode('')
      })
  }, [botId])

  const deploy = async () => {
    setError(null)
    setNotice('')
    setBusy(true)
    try {
      await admin('PUT', botPath(botId), { body: { code } })
      setNotice('Deployed.')
      await Promise.all([loadVersions(), reloadBot()])
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
      // Disabled while busy, the button lost the focus to the page: give
      // it back, so a keyboard user goes on from where they were.
      setTimeout(() => {
        if (document.activeElement === document.body) document.getElementById('deploy')?.focus()
      })
    }
  }

  const deployVersion = async (v) => {
    setError(null)
    setNotice('')
    try {
      await admin('POST', botPath(botId) + '/versions/deploy', { body: { versionId: v.id } })
      setCode(await versionCode(botId, v.id))
      setNotice('Deployed version ' + v.name + '.')
      await Promise.all([loadVersions(), reloadBot()])
    } catch (err) {
      setError(err)
    }
  }

  return html`
    <${BotNav} bot=${bot} botId=${botId} page="code" />
    <${ErrorText} error=${botError} />
    <section aria-labelledby="code-h">
      <div class="section-head">
        <h2 id="code-h">Code</h2>
        <span class="muted">${bot && bot.deployedAt ? 'deployed ' + when(bot.deployedAt) : ''}</span>
        <button type="button" id="deploy" onClick=${deploy} disabled=${busy || code === null}>Deploy</button>
      </div>
      ${code === null ? html`<p class="muted">Loading…</p>` :
        html`<${CodeEditor} id="code" label="Bot code" value=${code} onInput=${setCode} errorLine=${errorLine(error)} />`}
      <${ErrorText} error=${error} id="deploy-error" />
      ${notice && html`<p class="notice" role="status" id="deploy-notice">${notice}</p>`}
    </section>
    <div class="columns">
      <section aria-labelledby="versions-h" class="versions">
        <h2 id="versions-h">Versions</h2>
        ${versions === null ? html`<p class="muted">Loading…</p>` : html`
          <table class="list" id="versions">
            <thead><tr><th scope="col">Name</th><th scope="col">Recorded</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
            <tbody>
              ${versions.map((v) => html`<tr key=${v.id} data-version=${v.name}>
                <td>${v.name}${v.current ? html` <span class="badge">running</span>` : ''}${v.description ? html`<div class="muted">${v.description}</div>` : ''}</td>
                <td>${when(v.createdAt)}</td>
                <td class="actions">${!v.current && html`
                  <button type="button" onClick=${() => deployVersion(v)} aria-label=${'Deploy version ' + v.name}>Deploy this version</button>`}</td>
              </tr>`)}
            </tbody>
          </table>`}
      </section>
      <${Logs} botId=${botId} filter=${logFilter} onFilter=${(f) => location.replace(logsHref(botId, f))} />
    </div>`
}

// Sign in with a personal access token; the workspace is typed in, or
// picked from the token's workspaces (listWorkspaces).
import { html, useState, ErrorText } from './ui.js'
import { admin } from './api.js'
import { saveSession } from './session.js'

export function SignIn({ onSignedIn }) {
  const [token, setToken] = useState('')
  const [workspaceId, setWorkspaceId] = useState('')
  const [choices, setChoices] = useState(null) // workspaces to pick from
  const [error, setError] = useState(null)
  const [busy, setBusy] = useState(false)

  const finish = (ws) => {
    const s = { token: token.trim(), workspaceId: ws.id, workspaceName: ws.name || '' }
    saveSession(s)
    onSignedIn(s)
  }

  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    setBusy(true)
    try {
      const auth = { token: token.trim() }
      const { workspaces } = await admin('GET', '/workspaces', { auth, query: { pageSize: 100 } })
      const wanted = workspaceId.trim()
      if (wanted) {
        const ws = workspaces.find((w) => w.id === wanted)
        if (!ws) throw new Error('This token is not a member of workspace ' + wanted + '.')
        return finish(ws)
      }
      if (workspaces.length === 1) return finish(workspaces[0])
      if (workspaces.length === 0) throw new Error('This token is not a member of any workspace.')
      setChoices(workspaces)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  return html`
    <main class="signin">
      <h1>botplatform console</h1>
      <form onSubmit=${submit} autocomplete="off">
        <label for="token">Personal access token</label>
        <input id="token" type="password" required value=${token} onInput=${(e) => setToken(e.target.value)}
          placeholder="bp_pat_…" spellcheck="false" />
        <label for="workspace">Workspace id <span class="hint">(optional: pick one after signing in)</span></label>
        <input id="workspace" value=${workspaceId} onInput=${(e) => setWorkspaceId(e.target.value)}
          placeholder="wkspace_…" spellcheck="false" />
        <button type="submit" id="sign-in" disabled=${busy}>Sign in</button>
        <${ErrorText} error=${error} id="signin-error" />
      </form>
      ${choices && html`
        <section aria-labelledby="pick">
          <h2 id="pick">Pick a workspace</h2>
          <ul class="choices">
            ${choices.map((w) => html`<li key=${w.id}>
              <button type="button" onClick=${() => finish(w)}>${w.name || w.id}</button> <code>${w.id}</code></li>`)}
          </ul>
        </section>`}
      <p class="hint">The token stays in this tab's session storage and is sent only to this server's APIs.
        The first start of the server prints one, and writes it to <code>data/bootstrap.json</code>.</p>
    </main>`
}

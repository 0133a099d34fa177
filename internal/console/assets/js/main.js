// The console: the signed-in layout and the routes of its pages. A page is
// a component of its own module, chosen by the path of the URL's fragment
// (#/bots/…); what follows a ? in the fragment is the page's own state (the
// logs' filter), which routing ignores.
import { html, render, useState, useEffect } from './ui.js'
import { loadSession, clearSession } from './session.js'
import { SignIn } from './signin.js'
import { BotsPage } from './bots.js'
import { BotPage } from './bot.js'
import { ChatPage } from './chat.js'
import { FilesPage } from './files.js'
import { FilePage } from './file.js'
import { SearchPage } from './search.js'
import { WorkspacePage } from './workspace.js'
import { SettingsPage } from './settings.js'
import { IntegrationsPage } from './integrations.js'
import { ConversationsPage, ConversationPage } from './conversations.js'

// routes match the fragment's path; the first that matches is the page,
// made from the path's parts and then the fragment's query.
const routes = [
  [/^\/bots$/, () => html`<${BotsPage} />`],
  [/^\/bots\/([^/]+)$/, (id, query) => html`<${BotPage} botId=${id} logFilter=${query.get('q') || ''} />`],
  [/^\/bots\/([^/]+)\/chat$/, (id) => html`<${ChatPage} botId=${id} />`],
  [/^\/bots\/([^/]+)\/files$/, (id) => html`<${FilesPage} botId=${id} />`],
  [/^\/bots\/([^/]+)\/files\/([^/]+)$/, (id, file) => html`<${FilePage} botId=${id} fileId=${file} />`],
  [/^\/bots\/([^/]+)\/search$/, (id) => html`<${SearchPage} botId=${id} />`],
  [/^\/bots\/([^/]+)\/integrations$/, (id) => html`<${IntegrationsPage} botId=${id} />`],
  [/^\/bots\/([^/]+)\/settings$/, (id) => html`<${SettingsPage} botId=${id} />`],
  [/^\/bots\/([^/]+)\/conversations$/, (id) => html`<${ConversationsPage} botId=${id} />`],
  [/^\/bots\/([^/]+)\/conversations\/([^/]+)$/, (id, c) => html`<${ConversationPage} botId=${id} convId=${c} />`],
  [/^\/workspace$/, () => html`<${WorkspacePage} />`],
]

function route() {
  return location.hash.replace(/^#/, '') || '/bots'
}

function useRoute() {
  const [r, setR] = useState(route())
  useEffect(() => {
    const on = () => setR(route())
    addEventListener('hashchange', on)
    return () => removeEventListener('hashchange', on)
  }, [])
  return r
}

function App() {
  const [session, setSession] = useState(loadSession())
  const fragment = useRoute()
  const at = fragment.indexOf('?')
  const path = at < 0 ? fragment : fragment.slice(0, at)
  if (!session) return html`<${SignIn} onSignedIn=${setSession} />`
  let page = html`<p>No such page. <a href="#/bots">Bots</a></p>`
  for (const [re, make] of routes) {
    const m = path.match(re)
    if (m) {
      page = make(...m.slice(1).map(decodeURIComponent), new URLSearchParams(at < 0 ? '' : fragment.slice(at + 1)))
      break
    }
  }
  const signOut = () => {
    clearSession()
    setSession(null)
    location.hash = ''
  }
  return html`
    <header class="top">
      <a class="brand" href="#/bots">botplatform</a>
      <nav aria-label="Main">
        <a href="#/bots" aria-current=${path.startsWith('/bots') ? 'page' : undefined}>Bots</a>
        <a href="#/workspace" id="nav-workspace" aria-current=${path === '/workspace' ? 'page' : undefined}>Workspace</a>
      </nav>
      <span class="who" title="Workspace">${session.workspaceName || session.workspaceId}</span>
      <button type="button" class="link" id="sign-out" onClick=${signOut}>Sign out</button>
    </header>
    <main id="main">${page}</main>`
}

render(html`<${App} />`, document.getElementById('app'))

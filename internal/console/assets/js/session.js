// The signed-in session: a personal access token and a workspace, kept in
// sessionStorage (this tab only, gone when it closes), never in a URL.
const KEY = 'botplatform.console.session'

export function loadSession() {
  try {
    const s = JSON.parse(sessionStorage.getItem(KEY) || 'null')
    return s && s.token && s.workspaceId ? s : null
  } catch {
    return null
  }
}

export function saveSession(s) {
  sessionStorage.setItem(KEY, JSON.stringify(s))
}

export function clearSession() {
  sessionStorage.removeItem(KEY)
}

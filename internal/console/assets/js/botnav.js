// The header of a bot's pages: its name and the links between them.
import { html, useState, useEffect } from './ui.js'
import { admin } from './api.js'

// useBot loads a bot (getBot); reload after a change. byAlias keys its
// integrations by alias (x-multiple-integrations), the name its code and
// its log lines call each by, rather than by integration id.
export function useBot(botId, byAlias = false) {
  const [bot, setBot] = useState(null)
  const [error, setError] = useState(null)
  const reload = () =>
    admin('GET', '/bots/' + encodeURIComponent(botId), { headers: byAlias ? { 'x-multiple-integrations': 'true' } : {} }).then((r) => {
      setBot(r.bot)
      return r.bot
    }, setError)
  useEffect(() => {
    reload()
  }, [botId])
  return { bot, error, reload }
}

export function BotNav({ bot, botId, page }) {
  const base = '#/bots/' + encodeURIComponent(botId)
  const link = (href, name, label) =>
    html`<a href=${href} aria-current=${page === name ? 'page' : undefined}>${label}</a>`
  return html`
    <div class="bot-head">
      <p class="crumbs"><a href="#/bots">Bots</a> /</p>
      <h1 id="bot-title">${bot ? bot.name || '(no name)' : '…'}</h1>
      <nav class="tabs" aria-label="Bot">
        ${link(base, 'code', 'Code and logs')}
        ${link(base + '/chat', 'chat', 'Chat')}
        ${link(base + '/conversations', 'conversations', 'Conversations')}
        ${link(base + '/files', 'files', 'Files')}
        ${link(base + '/search', 'search', 'Search')}
        ${link(base + '/integrations', 'integrations', 'Integrations')}
        ${link(base + '/settings', 'settings', 'Settings')}
      </nav>
    </div>`
}

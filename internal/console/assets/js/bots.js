// The workspace's bots: list, create, delete.
import { html, useState, useEffect, ErrorText, when, go, Confirm } from './ui.js'
import { admin } from './api.js'

// starterCode is a new bot's code: it answers every message with its text.
export const starterCode = `bot.on.message('*', async ({ message, client, logger }) => {
  logger.info('got a message')
  await client.createMessage({
    conversationId: message.conversationId,
    payload: { type: 'text', text: 'You said: ' + message.payload.text },
  })
})
`

async function listAllBots() {
  const bots = []
  let nextToken
  do {
    const page = await admin('GET', '/bots', { query: { nextToken } })
    bots.push(...page.bots)
    nextToken = page.meta && page.meta.nextToken
  } while (nextToken)
  return bots
}

export function BotsPage() {
  const [bots, setBots] = useState(null)
  const [error, setError] = useState(null)
  const [name, setName] = useState('')
  const [busy, setBusy] = useState(false)

  const reload = () => listAllBots().then(setBots, setError)
  useEffect(() => {
    document.title = 'Bots · botplatform'
    reload()
  }, [])

  const create = async (e) => {
    e.preventDefault()
    setError(null)
    setBusy(true)
    try {
      const { bot } = await admin('POST', '/bots', { body: { name: name.trim(), code: starterCode } })
      setName('')
      go('/bots/' + encodeURIComponent(bot.id))
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }

  const remove = async (bot) => {
    setError(null)
    try {
      await admin('DELETE', '/bots/' + encodeURIComponent(bot.id), { body: {} })
      await reload()
    } catch (err) {
      setError(err)
    }
  }

  return html`
    <h1>Bots</h1>
    <form class="inline" onSubmit=${create}>
      <label for="new-bot-name">New bot</label>
      <input id="new-bot-name" required value=${name} onInput=${(e) => setName(e.target.value)} placeholder="name" />
      <button type="submit" id="create-bot" disabled=${busy}>Create</button>
    </form>
    <${ErrorText} error=${error} id="bots-error" />
    ${bots === null ? html`<p class="muted">Loading…</p>` : bots.length === 0 ? html`<p class="muted">No bots yet.</p>` : html`
      <table class="list" id="bots">
        <thead><tr><th scope="col">Name</th><th scope="col">Id</th><th scope="col">Updated</th><th scope="col"><span class="sr">Actions</span></th></tr></thead>
        <tbody>
          ${bots.map((b) => html`<tr key=${b.id} data-bot=${b.id}>
            <td><a class="bot-name" href=${'#/bots/' + encodeURIComponent(b.id)}>${b.name || '(no name)'}</a></td>
            <td><code>${b.id}</code></td>
            <td>${when(b.updatedAt)}</td>
            <td class="actions">
              <a href=${'#/bots/' + encodeURIComponent(b.id) + '/chat'}>Chat</a>
              <${Confirm} label="Delete" question=${'Delete the bot ' + (b.name || b.id) + ' and all its data?'} onConfirm=${() => remove(b)} />
            </td>
          </tr>`)}
        </tbody>
      </table>`}`
}

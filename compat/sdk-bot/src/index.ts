// A bot written with @botpress/sdk as its developers write them, run by
// test/sdk-bots.test.js with `bp deploy`, `bp dev` and `bp serve`. The test
// changes VERSION to see `bp dev` pick up a code change.
import { Bot } from '@botpress/sdk'

const VERSION = 'v1'

// @botpress/cli 0.8.59 reads the definition from the bot's props and cannot
// convert @botpress/sdk 5's zod schemas, so this bot declares no state or
// event schemas (states work undeclared) and its table's schema is plain
// JSON Schema.
const notesSchema = { type: 'object', properties: { note: { type: 'string' }, count: { type: 'number' } } }

const bot = new Bot({
  integrations: {},
  plugins: {},
  states: {},
  events: {},
  tables: { notesTable: { schema: notesSchema } },
  recurringEvents: { tick: { type: 'tick', payload: { note: 'every minute' }, schedule: { cron: '* * * * *' } } },
  actions: {
    double: async ({ input }: any) => ({ value: input.value * 2, version: VERSION }),
  },
} as any)

// `bp deploy` has the server create the declared table; a bot run by `bp
// dev` or served at a url creates it itself.
let notesTable: Promise<unknown> | undefined
const notes = (client: any) => (notesTable ??= client._inner.getOrCreateTable({ table: 'notesTable', schema: notesSchema }))

const say = (client: any, ctx: any, conversationId: string, text: string) =>
  client.createMessage({ conversationId, userId: ctx.botId, tags: {}, type: 'text', payload: { text } })

bot.on.message('*', async ({ message, client, ctx, logger }: any) => {
  const text: string = message.payload.text
  if (text.startsWith('echo:')) return say(client, ctx, message.conversationId, text) // bench/sdk-echo.mjs
  if (text === 'throw') throw new Error('the bot threw on purpose')
  if (text === 'hang') return new Promise(() => {})
  if (text === 'crash') process.exit(3)
  const key = { type: 'conversation', id: message.conversationId, name: 'counter' }
  const { state } = await client.getOrSetState({ ...key, payload: { count: 0 } })
  const count = state.payload.count + 1
  await client.setState({ ...key, payload: { count } })
  await notes(client)
  await client.createTableRows({ table: 'notesTable', rows: [{ note: text, count }] })
  logger.info(`message ${count}: ${text}`)
  await say(client, ctx, message.conversationId, `${VERSION} You said: ${text} (#${count})`)
})

bot.on.event('*', async ({ event, client, ctx, logger }: any) => {
  if (event.type === 'chat:custom') {
    await say(client, ctx, event.payload.conversationId, `custom: ${JSON.stringify(event.payload.payload)}`)
    return
  }
  logger.info(`event ${event.type}: ${JSON.stringify(event.payload)}`)
})

export default bot

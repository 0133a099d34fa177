// A bot written with @botpress/sdk whose answers are llmz agents, run by
// test/llm-bots.test.js with `bp deploy`. llmz (through @botpress/cognitive
// 0.3.3) calls the bot's openai integration with callAction; the model's
// answer is code that llmz runs in its sandbox: it calls the bot's tool and
// ends with the agent's exit.
import { Bot } from '@botpress/sdk'
import { z } from '@bpinternal/zui'
import { execute, Exit, Tool } from 'llmz'

const bot = new Bot({ integrations: {}, plugins: {}, states: {}, events: {}, actions: {} } as any)

const temperature = new Tool({
  name: 'getTemperature',
  description: 'The temperature in a city now, in degrees Celsius',
  input: z.object({ city: z.string() }),
  output: z.number(),
  handler: async ({ city }: { city: string }) => (city === 'Oslo' ? -3 : 20),
})

const answer = new Exit({ name: 'answer', description: 'The answer to the task', schema: z.object({ text: z.string() }) })

bot.on.message('*', async ({ message, client, ctx }: any) => {
  const result: any = await execute({ client, instructions: message.payload.text, tools: [temperature], exits: [answer], options: { loop: 3 } } as any)
  const text = result.is(answer) ? result.output.text : `the agent ended ${result.status}: ${result.error ?? ''}`
  await client.createMessage({ conversationId: message.conversationId, userId: ctx.botId, tags: {}, type: 'text', payload: { text } })
})

export default bot

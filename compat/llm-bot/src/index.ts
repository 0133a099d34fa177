// A bot written with @botpress/sdk that answers through a language model
// with @botpress/zai, run by test/llm-bots.test.js with `bp deploy`. zai
// (through @botpress/cognitive) finds the models of the bot's openai
// integration and calls them with callAction. "<operation>:<text>" runs
// one of zai's operations on the text and answers with its result;
// "beta:<text>" asks @botpress/cognitive's beta path (/v2/cognitive).
import { Cognitive } from '@botpress/cognitive'
import { Bot } from '@botpress/sdk'
import { Zai } from '@botpress/zai'
import { z } from '@bpinternal/zui'

const bot = new Bot({ integrations: {}, plugins: {}, states: {}, events: {}, actions: {} } as any)

const say = (client: any, ctx: any, conversationId: string, text: string) =>
  client.createMessage({ conversationId, userId: ctx.botId, tags: {}, type: 'text', payload: { text } })

bot.on.message('*', async ({ message, client, ctx }: any) => {
  const zai = new Zai({ client })
  const question: string = message.payload.text
  const [op, ...rest] = question.split(':')
  const text = rest.join(':')
  const reply = (answer: unknown) => say(client, ctx, message.conversationId, typeof answer === 'string' ? answer : JSON.stringify(answer))
  switch (op) {
    case 'check':
      return reply((await zai.check(text, 'is about animals')) ? 'yes' : 'no')
    case 'extract':
      return reply(await zai.extract(text, z.object({ animal: z.string(), legs: z.number() })))
    case 'filter':
      return reply(await zai.filter(text.split(','), 'is an animal'))
    case 'label':
      return reply(await zai.label(text, { animal: 'is it about an animal?', plant: 'is it about a plant?' }))
    case 'rewrite':
      return reply(await zai.rewrite(text, 'in capital letters'))
    case 'beta': {
      // @botpress/cognitive's beta path: /v2/cognitive instead of the integration.
      const { output } = await new Cognitive({ client, __experimental_beta: true } as any).generateContent({
        model: 'best',
        systemPrompt: 'Answer in one sentence.',
        messages: [{ role: 'user', content: text }],
      })
      return reply(output.choices[0]?.content ?? '')
    }
    case 'summarize':
      return reply(await zai.summarize(text, { length: 20 }))
  }
  return say(client, ctx, message.conversationId, await zai.text(`Answer in one sentence: ${question}`))
})

export default bot

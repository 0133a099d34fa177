import * as sdk from '@botpress/sdk'
import * as bp from '.botpress'

type Message = { role: string; type?: string; content?: unknown; toolCalls?: unknown[]; toolResultCallId?: string }

// The interface's messages as the provider's chat messages (text turns only:
// what this provider takes).
const toProvider = (systemPrompt: string | undefined, messages: Message[]) => [
  ...(systemPrompt ? [{ role: 'system', content: systemPrompt }] : []),
  ...messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : JSON.stringify(m.content) })),
]

const stopReasons: Record<string, 'stop' | 'max_tokens' | 'tool_calls' | 'content_filter' | 'other'> = {
  stop: 'stop',
  length: 'max_tokens',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
}

export default new bp.Integration({
  register: async () => {},
  unregister: async () => {},
  actions: {
    listLanguageModels: async ({ ctx }: any) => ({
      models: [
        {
          id: ctx.configuration.model,
          name: `Provider's ${ctx.configuration.model}`,
          description: 'The model the installation names',
          tags: ['recommended', 'general-purpose'],
          input: { costPer1MTokens: 0, maxTokens: 32000 },
          output: { costPer1MTokens: 0, maxTokens: 4096 },
        },
      ],
    }),
    generateContent: async ({ ctx, input, logger }: any) => {
      const res = await fetch(`${ctx.configuration.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: input.model?.id ?? ctx.configuration.model,
          messages: toProvider(input.systemPrompt, input.messages),
          temperature: input.temperature,
          max_tokens: input.maxTokens,
          stop: input.stopSequences,
        }),
      })
      if (!res.ok) {
        throw new sdk.RuntimeError(`the provider answered ${res.status}: ${await res.text()}`)
      }
      const body = (await res.json()) as any
      logger.forBot().info(`llm-provider: ${body.model} answered`)
      return {
        id: body.id,
        provider: 'llm-provider',
        model: body.model,
        choices: body.choices.map((c: any) => ({
          role: 'assistant',
          type: 'text',
          content: c.message.content,
          index: c.index,
          stopReason: stopReasons[c.finish_reason] ?? 'other',
        })),
        usage: { inputTokens: body.usage.prompt_tokens, inputCost: 0, outputTokens: body.usage.completion_tokens, outputCost: 0 },
        botpress: { cost: 0 },
      }
    },
  },
  channels: {},
  handler: async () => {},
})

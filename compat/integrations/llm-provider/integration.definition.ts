import { IntegrationDefinition, interfaces, z } from '@botpress/sdk'
import { integrationName } from './package.json'

export default new IntegrationDefinition({
  name: integrationName,
  version: '0.1.0',
  title: 'LLM provider',
  description: "A provider's models, through its OpenAI-compatible API",
  configuration: {
    schema: z.object({
      baseUrl: z.string().describe("The provider's API, ending in /v1"),
      model: z.string().describe('The model that answers'),
    }),
  },
  entities: {
    modelRef: { schema: z.object({ id: z.string() }) },
  },
}).extend(interfaces.llm, ({ modelRef }) => ({ modelRef }))

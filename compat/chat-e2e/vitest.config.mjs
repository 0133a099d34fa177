// Vitest configuration for @botpress/chat's own end-to-end suite, as copied by
// chat-e2e/run.mjs into compat/.chat-e2e/. It mirrors the package's
// vitest.config.ts (20 s per test, every e2e/*.test.ts) minus its
// `import 'dotenv/config'`: run.mjs passes API_URL and ENCRYPTION_KEY in the
// environment, and a stray compat/.env must not change what is tested.

import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vitest/config'

const compatDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..')

export default defineConfig({
  root: compatDir,
  test: {
    root: compatDir,
    testTimeout: 20_000,
    include: ['.chat-e2e/*.test.ts'],
    reporters: ['verbose'],
  },
})

// The official web chat that the binary serves (internal/webchat/official)
// is what scripts/webchat-official builds from its pinned packages
// (@botpress/webchat 4.5.2, React 19): the committed files are not edited
// by hand, and NOTICES.txt names the licence of everything the script
// holds. `make test-compat` installs that directory's packages.

import { test } from 'node:test'
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..')

test('the committed official web chat is what scripts/webchat-official builds', async () => {
  const { buildOfficial } = await import(path.join(root, 'scripts', 'webchat-official', 'build.mjs'))
  const out = await fs.mkdtemp(path.join(os.tmpdir(), 'webchat-official-'))
  try {
    await buildOfficial(out)
    for (const f of ['webchat.js', 'webchat.css', 'NOTICES.txt']) {
      const built = await fs.readFile(path.join(out, f))
      const committed = await fs.readFile(path.join(root, 'internal', 'webchat', 'official', f))
      assert.ok(built.equals(committed), `internal/webchat/official/${f} differs from a fresh build: run node scripts/webchat-official/build.mjs and commit`)
    }
    const notices = await fs.readFile(path.join(out, 'NOTICES.txt'), 'utf8')
    for (const p of ['@botpress/webchat 4.5.2 (MIT)', 'react 19.3.1 (MIT)', 'react-dom 19.3.1 (MIT)']) {
      assert.ok(notices.includes(p), `NOTICES.txt names ${p}`)
    }
  } finally {
    await fs.rm(out, { recursive: true, force: true })
  }
})

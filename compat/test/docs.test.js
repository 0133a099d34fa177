// The documentation runs as written: every code block of README.md and
// docs/*.md marked with a comment line `<!-- run: NAME expect: TEXT -->`
// just above it is run against a fresh server, in a directory laid out as
// the README's reader has it (data/ with the server's bootstrap.json,
// bin/botplatform, docs/, quickstart/ with the npm clients installed). A
// `sh` block runs with bash -euo pipefail there, a `js` block as an ES
// module with node in quickstart/; each
// must exit 0 and print TEXT. The server listens on a port of its own, so
// the default address http://127.0.0.1:8080 in a block stands for it. A
// marker whose block is not right below it fails the test, so a marker
// cannot silently stop applying.
//
// It also checks what the reader copies by hand: the README's npm install
// line names the client versions this suite runs, and its test database
// URL is the one .ci/run uses.

import { test, before, after } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { startServer, serverBinary } from '../support/server.js'

const compat = path.dirname(path.dirname(fileURLToPath(import.meta.url)))
const repo = path.dirname(compat)
const DEFAULT_URL = 'http://127.0.0.1:8080'
const MARKER = /^<!-- run: (\S+)(?: expect: (.*?))? -->$/
const BLOCK_TIMEOUT_MS = 180_000

/** The marked blocks of a Markdown file: {file, line, name, lang, code, expect}. */
export function markedBlocks(file, text) {
  const lines = text.split('\n')
  const blocks = []
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i].trim())
    if (!m) continue
    const fence = /^```(\w+)\s*$/.exec(lines[i + 1] ?? '')
    if (!fence) throw new Error(`${file}:${i + 1}: a run marker must be followed by a fenced code block`)
    const end = lines.indexOf('```', i + 2)
    if (end < 0) throw new Error(`${file}:${i + 2}: the code block never ends`)
    blocks.push({ file, line: i + 2, name: m[1], expect: m[2], lang: fence[1], code: lines.slice(i + 2, end).join('\n') + '\n' })
    i = end
  }
  return blocks
}

async function docsFiles() {
  const docs = (await fs.readdir(path.join(repo, 'docs'))).filter((f) => f.endsWith('.md')).map((f) => path.join('docs', f))
  return ['README.md', ...docs]
}

function run(cmd, args, opts) {
  return new Promise((resolve) => {
    execFile(cmd, args, { ...opts, timeout: BLOCK_TIMEOUT_MS, maxBuffer: 16 << 20 }, (err, stdout, stderr) =>
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr })
    )
  })
}

let server
let work // the reader's directory

before(async () => {
  server = await startServer()
  work = await fs.mkdtemp(path.join(os.tmpdir(), 'botplatform-docs-'))
  await fs.mkdir(path.join(work, 'bin'))
  await fs.symlink(serverBinary(), path.join(work, 'bin', 'botplatform'))
  await fs.symlink(server.dataDir, path.join(work, 'data'))
  await fs.symlink(path.join(repo, 'docs'), path.join(work, 'docs'))
  // The README's JavaScript reader works in quickstart/, where the clients are installed.
  await fs.mkdir(path.join(work, 'quickstart'))
  await fs.symlink(path.join(compat, 'node_modules'), path.join(work, 'quickstart', 'node_modules'))
})

after(async () => {
  await server?.stop()
  if (work) await fs.rm(work, { recursive: true, force: true })
})

test('the marked code blocks of README.md and docs/ run as written', async (t) => {
  const blocks = []
  for (const file of await docsFiles()) {
    blocks.push(...markedBlocks(file, await fs.readFile(path.join(repo, file), 'utf8')))
  }
  const inReadme = blocks.filter((b) => b.file === 'README.md').map((b) => b.name)
  assert.deepEqual(inReadme, ['cli', 'js', 'curl'], 'the README quick start blocks')
  const env = { ...process.env }
  for (const k of Object.keys(env)) {
    if (k.startsWith('BOTPLATFORM_') || k.startsWith('BP_')) delete env[k]
  }
  for (const [i, b] of blocks.entries()) {
    await t.test(`${b.file}:${b.line} (${b.name})`, async () => {
      const code = b.code.replaceAll(DEFAULT_URL, server.apiUrl)
      let res
      if (b.lang === 'sh') {
        res = await run('bash', ['-euo', 'pipefail', '-c', code], { cwd: work, env })
      } else if (b.lang === 'js') {
        const file = path.join(work, 'quickstart', `block-${i}.mjs`)
        await fs.writeFile(file, code)
        res = await run('node', [file], { cwd: path.join(work, 'quickstart'), env })
      } else {
        assert.fail(`${b.file}:${b.line}: a run marker on a ${b.lang} block: only sh and js blocks run`)
      }
      const shown = `exit ${res.code}\nstdout:\n${res.stdout}\nstderr:\n${res.stderr}`
      assert.equal(res.code, 0, shown)
      if (b.expect) assert.ok(res.stdout.includes(b.expect), `want ${JSON.stringify(b.expect)} in the output\n${shown}`)
    })
  }
})

test('what the README asks to copy matches what the tests use', async () => {
  const readme = await fs.readFile(path.join(repo, 'README.md'), 'utf8')
  const pkg = JSON.parse(await fs.readFile(path.join(compat, 'package.json'), 'utf8'))
  const install = /^npm install (.+)$/m.exec(readme)
  assert.ok(install, 'the README has an npm install line')
  for (const spec of install[1].trim().split(/\s+/)) {
    const at = spec.lastIndexOf('@')
    const name = spec.slice(0, at)
    assert.equal(spec.slice(at + 1), pkg.dependencies[name], `${name}: the README's version and compat/package.json's`)
  }
  const ci = await fs.readFile(path.join(repo, '.ci', 'run'), 'utf8')
  const ciURL = /^PGURL="([^"]+)"$/m.exec(ci)[1]
  assert.ok(readme.includes('`' + ciURL + '`'), `the README's test database URL is .ci/run's (${ciURL})`)
})

test('a marker without its block is refused', () => {
  assert.throws(() => markedBlocks('x.md', '<!-- run: a -->\ntext\n'), /must be followed by a fenced code block/)
  const [b] = markedBlocks('x.md', 'intro\n<!-- run: a expect: ok -->\n```sh\necho ok\n```\n')
  assert.deepEqual(b, { file: 'x.md', line: 3, name: 'a', expect: 'ok', lang: 'sh', code: 'echo ok\n' })
})

// Runs @botpress/chat's own end-to-end suite (the e2e/*.test.ts files shipped
// in its npm tarball) against a throw-away botplatform server:
//
//   BOTPLATFORM_BIN=$PWD/../bin/botplatform node chat-e2e/run.mjs [vitest args...]
//
// 1. starts a server (support/server.js) and creates a bot whose code is
//    chat-e2e/hello-bot.js, the echo bot the suite expects;
// 2. copies node_modules/@botpress/chat/e2e/*.ts into compat/.chat-e2e/
//    (git-ignored, and inside compat so that node_modules resolves), changing
//    only `from '../src'` into `from '@botpress/chat'`: the assertions are the
//    package's own and are never edited;
// 3. runs vitest with chat-e2e/vitest.config.mjs, API_URL set to the bot's
//    chat webhook URL and ENCRYPTION_KEY to its chat encryption key.
//
// The exit code is vitest's. The server is always stopped; when vitest fails,
// the tail of the server's log is printed. Extra arguments go to vitest
// (e.g. `-t 'deleting a message'` or `.chat-e2e/user.test.ts`).

import { spawn } from 'node:child_process'
import fsp from 'node:fs/promises'
import { createRequire } from 'node:module'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@botpress/client'
import { startServer, serverBinary } from '../support/server.js'

const here = path.dirname(fileURLToPath(import.meta.url))
const compatDir = path.resolve(here, '..')
const outDir = path.join(compatDir, '.chat-e2e')
const vitestConfig = path.join(here, 'vitest.config.mjs')
const vitestBin = path.join(compatDir, 'node_modules', '.bin', 'vitest')
const LOG_TAIL_LINES = 60

const SRC_IMPORT = "from '../src'"
const PKG_IMPORT = "from '@botpress/chat'"

/** The e2e directory inside the installed @botpress/chat package. */
function chatE2eDir() {
  const require = createRequire(path.join(compatDir, 'package.json'))
  let pkgJson
  try {
    pkgJson = require.resolve('@botpress/chat/package.json')
  } catch (err) {
    throw new Error(`@botpress/chat is not installed in ${compatDir} (run \`npm ci\` there): ${err.message}`)
  }
  return path.join(path.dirname(pkgJson), 'e2e')
}

/**
 * Copies the package's e2e/*.ts into .chat-e2e/, rewriting the one import
 * that points into the package's sources. Returns the test files copied.
 */
async function copySuite() {
  const srcDir = chatE2eDir()
  let names
  try {
    names = (await fsp.readdir(srcDir)).filter((n) => n.endsWith('.ts')).sort()
  } catch (err) {
    throw new Error(`cannot list ${srcDir}: ${err.message}`)
  }
  const tests = names.filter((n) => n.endsWith('.test.ts'))
  if (tests.length === 0) throw new Error(`no *.test.ts in ${srcDir}`)

  await fsp.rm(outDir, { recursive: true, force: true })
  await fsp.mkdir(outDir, { recursive: true })
  for (const name of names) {
    const text = await fsp.readFile(path.join(srcDir, name), 'utf8')
    const count = text.split(SRC_IMPORT).length - 1
    const rewritten = text.replaceAll(SRC_IMPORT, PKG_IMPORT)
    // Any other reference to the package's sources (another quote style, a
    // sub-path, a require) would not resolve here: refuse rather than guess.
    if (/['"]\.\.\/src(\/[^'"]*)?['"]/.test(rewritten)) {
      throw new Error(
        `${path.join(srcDir, name)} imports '../src' in a form the runner does not rewrite ` +
          `(rewrote ${count} occurrence(s) of ${SRC_IMPORT}); update chat-e2e/run.mjs`
      )
    }
    await fsp.writeFile(path.join(outDir, name), rewritten)
    console.log(`chat-e2e: copied ${name}${count ? ` (${count} import(s) of '../src' -> '@botpress/chat')` : ''}`)
  }
  return tests
}

async function logTail(file, n = LOG_TAIL_LINES) {
  try {
    const text = await fsp.readFile(file, 'utf8')
    return text.split('\n').filter(Boolean).slice(-n).join('\n')
  } catch (err) {
    return `(could not read ${file}: ${err.message})`
  }
}

/** Sends sig to every process of vitest's group (vitest and its workers). */
function signalGroup(child, sig) {
  try {
    process.kill(-child.pid, sig)
  } catch {
    // ESRCH: the group is already gone
  }
}

/**
 * Runs vitest to completion in its own process group; resolves with its exit
 * code. Whatever is left of the group afterwards (a worker that outlived
 * vitest) is killed.
 */
function runVitest(env, extraArgs, onChild) {
  return new Promise((resolve, reject) => {
    const child = spawn(vitestBin, ['run', '--config', vitestConfig, ...extraArgs], {
      cwd: compatDir,
      env,
      stdio: 'inherit',
      detached: true, // its own process group, signalled by the handler in main()
    })
    onChild(child)
    child.once('error', (err) => reject(new Error(`cannot run ${vitestBin}: ${err.message}`)))
    child.once('exit', (code) => {
      signalGroup(child, 'SIGKILL')
      resolve(code ?? 1) // killed by a signal (no exit code): a failure
    })
  })
}

async function main() {
  serverBinary() // fail early, with the usual message, when BOTPLATFORM_BIN is unusable
  await fsp.access(vitestBin).catch(() => {
    throw new Error(`${vitestBin} not found: run \`npm ci\` in ${compatDir}`)
  })
  const code = await fsp.readFile(path.join(here, 'hello-bot.js'), 'utf8')
  await copySuite()

  let server
  let vitest
  let interrupted = false
  const onSignal = (sig) => {
    if (interrupted) return
    interrupted = true
    console.error(`chat-e2e: ${sig}, stopping`)
    if (vitest) signalGroup(vitest, 'SIGTERM')
    ;(server ? server.stop() : Promise.resolve()).finally(() => process.exit(130))
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)

  let exitCode = 1
  try {
    // Node 20's default HTTP agent (keep-alive, 5 s socket timeout) drops an
    // event stream that is silent for 5 s, and the server's default ping
    // interval is 20 s: ping every second, as test/chat.test.js does.
    server = await startServer({ args: ['--sse-ping-interval', '1s'] })
    console.log(`chat-e2e: server ${server.apiUrl} (data ${server.dataDir})`)
    const admin = new Client({ apiUrl: server.apiUrl, token: server.token, workspaceId: server.workspaceId })
    const { bot } = await admin.createBot({ name: 'hello-bot', code })
    const chat = bot.integrations?.chat
    const apiUrl = chat?.webhookUrl
    const encryptionKey = chat?.configuration?.encryptionKey
    if (typeof apiUrl !== 'string' || !apiUrl || typeof encryptionKey !== 'string' || !encryptionKey) {
      throw new Error(
        `bot ${bot.id} has no usable chat integration (webhookUrl / configuration.encryptionKey): ` +
          JSON.stringify(chat)
      )
    }
    console.log(`chat-e2e: bot ${bot.id}, API_URL=${apiUrl}`)

    const env = { ...process.env, API_URL: apiUrl, ENCRYPTION_KEY: encryptionKey }
    exitCode = await runVitest(env, process.argv.slice(2), (c) => (vitest = c))
  } catch (err) {
    console.error(`chat-e2e: ${err.stack || err.message}`)
    exitCode = 1
  } finally {
    if (interrupted) {
      // The signal handler stops the server; wait for it (stop() is shared)
      // so that the data directory is gone before the process exits.
      await server?.stop()
      exitCode = 130
    } else if (server) {
      const keepData = !!process.env.BOTPLATFORM_KEEP_DATA
      // Keep the data dir (and so server.log) until the tail is printed.
      if (exitCode !== 0) process.env.BOTPLATFORM_KEEP_DATA = '1'
      await server.stop()
      if (exitCode !== 0) {
        console.error(`\nchat-e2e: failed (exit ${exitCode}); last lines of ${server.logFile}:\n${await logTail(server.logFile)}`)
        if (!keepData) await fsp.rm(server.dataDir, { recursive: true, force: true })
      }
    }
  }
  return exitCode
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`chat-e2e: ${err.message}`)
    process.exit(1)
  }
)

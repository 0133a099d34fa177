// Starts a throw-away botplatform server for one test file.
//
//   const server = await startServer()
//   // server.apiUrl, server.token, server.workspaceId, server.chatUrl, server.dataDir
//   const viewerToken = await server.issueToken('viewer@example.com')
//   await server.stop()
//
// A restart on the same address and data: await server.stop({ keepData: true }),
// then startServer({ dataDir: server.dataDir, addr: new URL(server.apiUrl).host }).
//
// The binary comes from BOTPLATFORM_BIN (the Makefile's test-compat target sets
// it). Every server gets a fresh temporary data directory, so the first start
// bootstraps an owner account, a workspace and a token into bootstrap.json.
// The server's stderr goes to <dataDir>/server.log; when startup fails, its
// tail is printed.
//
// startServer({ backend: 'postgres' }) runs it on a fresh schema of the
// database BOTPLATFORM_TEST_DATABASE_URL names (created with psql, dropped
// at stop); backends() lists the backends a suite should run on.

import { spawn, execFile } from 'node:child_process'
import fs from 'node:fs'
import fsp from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import readline from 'node:readline'

const STARTUP_TIMEOUT_MS = Number(process.env.BOTPLATFORM_STARTUP_TIMEOUT_MS || 20_000)
const STOP_TIMEOUT_MS = 15_000
const LISTENING_RE = /^botplatform \S+ listening on (https?:\/\/\S+)\s*$/
const TAIL_LINES = 40

/** The server binary from BOTPLATFORM_BIN; throws a clear error if unusable. */
export function serverBinary() {
  const bin = process.env.BOTPLATFORM_BIN
  if (!bin) {
    throw new Error(
      'BOTPLATFORM_BIN is not set. Build the server (make build) and run e.g.\n' +
        '  BOTPLATFORM_BIN=$PWD/../bin/botplatform node --test --test-concurrency=1\n' +
        'or use `make test-compat` from the repository root.'
    )
  }
  const abs = path.resolve(bin)
  let st
  try {
    st = fs.statSync(abs)
  } catch {
    throw new Error(`BOTPLATFORM_BIN=${bin}: no such file (resolved to ${abs}); run \`make build\` first`)
  }
  if (!st.isFile()) throw new Error(`BOTPLATFORM_BIN=${bin}: not a regular file`)
  try {
    fs.accessSync(abs, fs.constants.X_OK)
  } catch {
    throw new Error(`BOTPLATFORM_BIN=${bin}: not executable`)
  }
  return abs
}

/**
 * The environment for the server: the caller's, minus every BOTPLATFORM_*
 * setting (a stray BOTPLATFORM_DATABASE_URL or BOTPLATFORM_ADMIN_TOKEN would
 * make the run depend on the machine), plus extra.
 */
function serverEnv(extra = {}) {
  const env = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (!k.startsWith('BOTPLATFORM_')) env[k] = v
  }
  return { ...env, ...extra }
}

async function tail(file, n = TAIL_LINES) {
  try {
    const text = await fsp.readFile(file, 'utf8')
    return text.split('\n').filter(Boolean).slice(-n).join('\n')
  } catch (err) {
    return `(could not read ${file}: ${err.message})`
  }
}

/** The backends to run a suite on: SQLite, and PostgreSQL when configured. */
export function backends() {
  return process.env.BOTPLATFORM_TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite']
}

function psql(url, sql) {
  return new Promise((resolve, reject) => {
    execFile('psql', [url, '-q', '-v', 'ON_ERROR_STOP=1', '-c', sql], { timeout: 30_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`psql ${sql}: ${err.message}\n${stderr}`))
      else resolve(stdout)
    })
  })
}

/** A fresh schema of the test database: its URL, and drop() to remove it. */
async function postgresSchema() {
  const base = process.env.BOTPLATFORM_TEST_DATABASE_URL
  if (!base) throw new Error('backend postgres needs BOTPLATFORM_TEST_DATABASE_URL')
  const name = `compat_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`
  await psql(base, `CREATE SCHEMA "${name}"`)
  const u = new URL(base)
  u.searchParams.set('search_path', name)
  return { url: u.toString(), drop: () => psql(base, `DROP SCHEMA "${name}" CASCADE`) }
}

/**
 * Spawns `BOTPLATFORM_BIN serve --addr 127.0.0.1:0 --data <fresh tmp dir>`.
 * Options: env (extra environment variables), args (extra serve flags),
 * timeoutMs (startup timeout), backend ('sqlite', the default, or 'postgres').
 */
export async function startServer({ env = {}, args = [], timeoutMs = STARTUP_TIMEOUT_MS, backend = 'sqlite', dataDir: reuse, addr = '127.0.0.1:0' } = {}) {
  const bin = serverBinary()
  if (reuse && backend !== 'sqlite') throw new Error('startServer: dataDir is reused on SQLite only')
  const schema = backend === 'postgres' ? await postgresSchema() : null
  const dataDir = reuse ?? (await fsp.mkdtemp(path.join(os.tmpdir(), 'botplatform-compat-')))
  const logFile = path.join(dataDir, 'server.log')
  const log = fs.createWriteStream(logFile, { flags: 'a' })

  const serveArgs = ['serve', '--addr', addr, '--data', dataDir, ...(schema ? ['--database-url', schema.url] : []), ...args]
  const child = spawn(bin, serveArgs, {
    env: serverEnv(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let exited = null // {code, signal} once the process is gone
  const exitPromise = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal }
      resolve(exited)
    })
  })
  // Never leave a server behind if the test process dies early.
  const killOnExit = () => {
    if (!exited) child.kill('SIGKILL')
  }
  process.once('exit', killOnExit)

  child.stderr.pipe(log)
  const stdoutLines = []
  const lines = readline.createInterface({ input: child.stdout })

  const startupError = async (reason) => {
    if (!exited) {
      child.kill('SIGKILL')
      await exitPromise
    }
    process.removeListener('exit', killOnExit)
    await new Promise((resolve) => log.end(resolve))
    const logTail = await tail(logFile)
    const msg =
      `botplatform server failed to start: ${reason}\n` +
      `  command: ${[bin, ...serveArgs].join(' ')}\n` +
      `  stdout:\n${stdoutLines.map((l) => '    ' + l).join('\n') || '    (nothing)'}\n` +
      `  last lines of ${logFile}:\n${logTail.replace(/^/gm, '    ') || '    (empty)'}`
    console.error(msg)
    return new Error(msg)
  }

  let apiUrl
  try {
    apiUrl = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`no "listening on" line within ${timeoutMs} ms`)),
        timeoutMs
      )
      lines.on('line', (line) => {
        stdoutLines.push(line)
        const m = LISTENING_RE.exec(line)
        if (m) {
          clearTimeout(timer)
          resolve(m[1])
        }
      })
      child.once('error', (err) => {
        clearTimeout(timer)
        reject(new Error(`spawn failed: ${err.message}`))
      })
      exitPromise.then(({ code, signal }) => {
        clearTimeout(timer)
        reject(new Error(`the process exited before listening (code ${code}, signal ${signal})`))
      })
    })
  } catch (err) {
    throw await startupError(err.message)
  }
  // Keep draining stdout so the server never blocks on a full pipe.
  lines.on('line', (line) => stdoutLines.push(line))

  let boot
  const bootFile = path.join(dataDir, 'bootstrap.json')
  try {
    boot = JSON.parse(await fsp.readFile(bootFile, 'utf8'))
  } catch (err) {
    throw await startupError(`cannot read ${bootFile}: ${err.message}`)
  }
  for (const k of ['token', 'workspaceId', 'apiUrl', 'chatUrl']) {
    if (typeof boot[k] !== 'string' || boot[k] === '') {
      throw await startupError(`${bootFile} has no "${k}"`)
    }
  }
  if (boot.apiUrl !== apiUrl) {
    throw await startupError(`bootstrap.json apiUrl ${boot.apiUrl} differs from the listening line's ${apiUrl}`)
  }

  let stopping = null
  // stop({ keepData: true }) leaves the data directory for a restart:
  // startServer({ dataDir: server.dataDir, addr: new URL(server.apiUrl).host }).
  const stop = ({ keepData = false } = {}) => {
    stopping ??= (async () => {
      if (!exited) {
        child.kill('SIGTERM')
        const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS)
        await exitPromise
        clearTimeout(timer)
      }
      process.removeListener('exit', killOnExit)
      await new Promise((resolve) => log.end(resolve))
      if (exited.code !== 0) {
        console.error(`botplatform server exited with code ${exited.code} signal ${exited.signal}; last lines of ${logFile}:\n${await tail(logFile)}`)
      }
      if (!keepData && !process.env.BOTPLATFORM_KEEP_DATA && exited.code === 0) {
        await fsp.rm(dataDir, { recursive: true, force: true })
        await schema?.drop()
      }
      return exited
    })()
    return stopping
  }

  /** Runs `botplatform token --email <email> --data <dataDir>` and returns the PAT it prints. */
  const issueToken = async (email, note) => {
    const tokenArgs = ['token', '--email', email, '--data', dataDir, ...(schema ? ['--database-url', schema.url] : [])]
    if (note) tokenArgs.push('--note', note)
    const { stdout } = await new Promise((resolve, reject) => {
      execFile(bin, tokenArgs, { env: serverEnv(), timeout: 15_000 }, (err, stdout, stderr) => {
        if (err) reject(new Error(`botplatform ${tokenArgs.join(' ')} failed: ${err.message}\n${stderr}`))
        else resolve({ stdout, stderr })
      })
    })
    return stdout.trim()
  }

  return {
    apiUrl,
    chatUrl: boot.chatUrl,
    token: boot.token,
    workspaceId: boot.workspaceId,
    dataDir,
    logFile,
    pid: child.pid,
    get exited() {
      return exited
    },
    issueToken,
    stop,
  }
}

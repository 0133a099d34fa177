// Runs @botpress/cli the way a developer does, for the suites that drive it.

import { spawn } from 'node:child_process'

/**
 * Runs `node bin args` in cwd with HOME=home (where bp keeps its login) to
 * the end; resolves with its output, rejects with it when bp fails.
 */
export function runBp(bin, cwd, home, args, { env = {}, timeout = 180_000 } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (out += d))
    const timer = setTimeout(() => child.kill('SIGKILL'), timeout)
    child.on('close', (code) => {
      clearTimeout(timer)
      code === 0 ? resolve(out) : reject(new Error(`bp ${args.join(' ')} exited ${code}:\n${out}`))
    })
  })
}

/**
 * Starts a long-running `node bin args` (bp dev, bp serve) in cwd with
 * HOME=home, in a process group of its own. wait(re, from?) resolves with the
 * first match of re in its output (from the offset mark() gave), failing
 * after waitMs; stop() kills the group.
 */
export function startBp(bin, cwd, home, args, { env = {}, waitMs = 60_000 } = {}) {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, HOME: home, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
  let out = ''
  const waiters = []
  const feed = (d) => {
    out += d
    for (const w of [...waiters]) {
      const m = out.slice(w.from).match(w.re)
      if (m) {
        waiters.splice(waiters.indexOf(w), 1)
        w.resolve(m)
      }
    }
  }
  child.stdout.on('data', feed)
  child.stderr.on('data', feed)
  return {
    child,
    mark: () => out.length,
    wait: (re, from = 0) =>
      new Promise((resolve, reject) => {
        const w = { re, from, resolve }
        const m = out.slice(from).match(re)
        if (m) return resolve(m)
        waiters.push(w)
        setTimeout(() => reject(new Error(`bp ${args[0]}: no ${re} within ${waitMs} ms; output:\n${out}`)), waitMs)
      }),
    stop: () => {
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {}
    },
  }
}

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

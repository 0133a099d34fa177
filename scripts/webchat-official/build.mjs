// Builds src/page.jsx with the pinned packages of package-lock.json into
// ../../internal/webchat/official/: webchat.js (one script, no module),
// webchat.css, and NOTICES.txt, the licence of every package the script
// holds. Run after changing a version: `npm ci && node build.mjs`; commit
// the three files. compat/test/webchat-official.test.js checks that what is
// committed is what this builds.
import { build } from 'esbuild'
import { readFile, writeFile, mkdir, readdir } from 'node:fs/promises'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const dir = path.dirname(fileURLToPath(import.meta.url))

export async function buildOfficial(out = path.join(dir, '..', '..', 'internal', 'webchat', 'official')) {
  await mkdir(out, { recursive: true })
  const result = await build({
    absWorkingDir: dir, // the inputs it reports are relative to this directory
    entryPoints: [path.join(dir, 'src/page.jsx')],
    bundle: true,
    outfile: path.join(out, 'webchat.js'),
    format: 'iife',
    jsx: 'automatic',
    target: 'es2020',
    define: { 'process.env.NODE_ENV': '"production"' },
    minify: true,
    legalComments: 'none', // NOTICES.txt holds the licences whole
    metafile: true,
    logLevel: 'warning',
  })
  // The packages the script holds: those esbuild read, and the ones
  // @botpress/webchat's own bundle holds (its dependencies, installed
  // beside it), without type definitions.
  const pkgs = new Map()
  for (const input of Object.keys(result.metafile.inputs)) {
    const m = /(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
    if (m) pkgs.set(m[1], true)
  }
  const withDeps = async (p) => {
    const meta = JSON.parse(await readFile(path.join(dir, p, 'package.json'), 'utf8'))
    for (const name of Object.keys(meta.dependencies ?? {})) {
      if (name.startsWith('@types/')) continue
      const q = [path.join(p, 'node_modules', name), path.join('node_modules', name)].find((c) => existsSync(path.join(dir, c, 'package.json')))
      if (q && !pkgs.has(q)) {
        pkgs.set(q, true)
        await withDeps(q)
      }
    }
  }
  await withDeps('node_modules/@botpress/webchat')
  // Each licence text once, with the packages it covers.
  const byText = new Map()
  for (const p of [...pkgs.keys()].sort()) {
    const meta = JSON.parse(await readFile(path.join(dir, p, 'package.json'), 'utf8'))
    const files = (await readdir(path.join(dir, p))).filter((f) => /^(licen[sc]e|copying|notice)/i.test(f)).sort()
    const license = typeof meta.license === 'string' ? meta.license : JSON.stringify(meta.license)
    let text = (await Promise.all(files.map((f) => readFile(path.join(dir, p, f), 'utf8')))).map((t) => t.trim()).join('\n\n')
    if (!text) text = `(the package has no licence file; its package.json says ${license})`
    if (!byText.has(text)) byText.set(text, [])
    byText.get(text).push(`${meta.name} ${meta.version} (${license})`)
  }
  const notices = ['The official web chat served by botplatform at /webchat/official/ bundles these packages, under these licences.', '']
  for (const [text, names] of byText) notices.push('='.repeat(78), ...names, '', text, '')
  await writeFile(path.join(out, 'NOTICES.txt'), notices.join('\n') + '\n')
  return out
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (!existsSync(path.join(dir, 'node_modules'))) throw new Error('run npm ci first')
  console.log(await buildOfficial())
}

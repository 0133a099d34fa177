// Bundles src/main.jsx (React, react-dom and @botpress/webchat from this
// directory's node_modules) into dist/: page.js and page.css, with
// index.html beside them. Run by compat/test/webchat-widget.test.js.
import { build } from 'esbuild'
import { writeFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import path from 'node:path'

const dir = path.dirname(fileURLToPath(import.meta.url))
const out = path.join(dir, 'dist')

export async function buildPage() {
  await build({
    entryPoints: [path.join(dir, 'src/main.jsx')],
    bundle: true,
    outfile: path.join(out, 'page.js'),
    format: 'esm',
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    minify: true,
    logLevel: 'warning',
  })
  await writeFile(
    path.join(out, 'index.html'),
    '<!doctype html><html><head><meta charset="utf-8"><title>A shop</title><link rel="stylesheet" href="page.css"></head>' +
      '<body style="margin:0"><div id="root"></div><script type="module" src="page.js"></script></body></html>\n'
  )
  return out
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  console.log(await buildPage())
}

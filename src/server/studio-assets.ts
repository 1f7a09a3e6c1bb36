/**
 * The studio's built UI (`dist/studio/`: index.html, assets/, favicon.svg) served as static files.
 * The files hold no data (every answer about agents, threads or memory comes from the identity-
 * checked routes), so they are served without asking for an identity: a page opened by a browser
 * navigation carries no `authorization` header yet.
 */
import { existsSync, readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { dirname, extname, join, normalize, sep } from 'node:path'
import { fileURLToPath } from 'node:url'
import { agentError } from '../errors.ts'

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml', '.json': 'application/json; charset=utf-8', '.png': 'image/png', '.ico': 'image/x-icon', '.map': 'application/json; charset=utf-8',
}

let located: Promise<string | undefined> | undefined

/**
 * The folder of the built studio: `dist/studio` of this package, found from this module's own
 * location (`dist/…` in the installed package, `src/server/` in a checkout that ran `npm run build`).
 */
export function studioDir(): Promise<string | undefined> {
  located ??= (async () => {
    let dir = dirname(fileURLToPath(import.meta.url))
    for (let depth = 0; depth < 6; depth++) {
      const manifest = join(dir, 'package.json')
      if (existsSync(manifest)) {
        try {
          if ((JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'vite-agent-memory') {
            const built = join(dir, 'dist', 'studio')
            return existsSync(join(built, 'index.html')) ? built : undefined
          }
        } catch {
          // Not our manifest: keep walking up.
        }
      }
      const parent = dirname(dir)
      if (parent === dir) break
      dir = parent
    }
    return undefined
  })()
  return located
}

/**
 * The answer for `path` (relative to the studio's mount, `''` for its index) from `dir`, or from
 * {@link studioDir} when `dir` is not given.
 *
 * @throws `STUDIO_NOT_BUILT` (503) when there is no built studio; `ROUTE_NOT_FOUND` (404) for a file outside it.
 */
export async function studioAsset(path: string, dir?: string): Promise<Response> {
  const root = dir ?? await studioDir()
  if (!root) throw agentError('STUDIO_NOT_BUILT', 'the studio UI is not built in this copy of vite-agent-memory', 'run `npm run build` in the package (the installed package ships dist/studio)')
  const relative = normalize(decodeURIComponent(path || 'index.html')).replace(/^([/\\])+/, '')
  const file = join(root, relative)
  if (relative.startsWith('..') || !file.startsWith(root + sep)) throw agentError('ROUTE_NOT_FOUND', `no studio file ${path}`, 'open the studio at its index')
  let bytes: Uint8Array
  try {
    bytes = await readFile(file)
  } catch {
    throw agentError('ROUTE_NOT_FOUND', `no studio file ${path}`, 'open the studio at its index')
  }
  const type = TYPES[extname(file)] ?? 'application/octet-stream'
  // Built assets carry a content hash in their names; the index must always be fetched again.
  const cache = relative.startsWith('assets') ? 'public, max-age=31536000, immutable' : 'no-cache'
  return new Response(bytes as BodyInit, { headers: { 'content-type': type, 'cache-control': cache } })
}

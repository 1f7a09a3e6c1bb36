/**
 * The consumer test: the packed tarball (`npm pack`, after the library build) unpacked into a
 * fresh app's node_modules, whose own Vite dev server (a real second process) uses
 * `agentMemory()` from `vite-agent-memory/vite`: the studio is served at /__agents/studio/ with
 * its assets and favicon, next to the agent routes, from the package alone.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'

const repo = resolve(import.meta.dirname, '../..')
let app: string
let child: ChildProcess
let base: string

beforeAll(async () => {
  // The tarball ships dist/: build it when this checkout has not.
  if (!existsSync(join(repo, 'dist/studio/index.html')) || !existsSync(join(repo, 'dist/vite/index.mjs'))) execFileSync('npm', ['run', 'build'], { cwd: repo, stdio: 'ignore' })
  app = mkdtempSync(join(tmpdir(), 'vam-consumer-'))
  const packed = execFileSync('npm', ['pack', '--silent', '--pack-destination', app], { cwd: repo, encoding: 'utf8' }).trim().split('\n').at(-1)!
  const modules = join(app, 'node_modules')
  mkdirSync(join(modules, 'vite-agent-memory'), { recursive: true })
  execFileSync('tar', ['-xzf', join(app, packed), '-C', join(modules, 'vite-agent-memory'), '--strip-components=1'])
  // The package's dependencies (and Vite) come from this checkout's install, as a registry install would provide them.
  for (const entry of readdirSync(join(repo, 'node_modules'))) {
    if (entry === '.bin' || entry === 'vite-agent-memory' || entry.startsWith('.')) continue
    symlinkSync(join(repo, 'node_modules', entry), join(modules, entry))
  }
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'fresh-app', private: true, type: 'module' }))
  mkdirSync(join(app, 'server', 'agents'), { recursive: true })
  writeFileSync(join(app, 'server', 'agents', 'echo.ts'), `import { createWorkspace, defineAgent } from 'vite-agent-memory'
export default defineAgent({ workspace: createWorkspace({ dir: ${JSON.stringify(join(app, 'workspace'))} }), driver: { run(context) { context.write('echo: ' + context.input) } } })
`)
  writeFileSync(join(app, 'index.html'), '<!doctype html><html><body>the app</body></html>')
  writeFileSync(join(app, 'serve.mjs'), `import { createServer } from 'vite'
import { agentMemory } from 'vite-agent-memory/vite'
const server = await createServer({ configFile: false, root: process.cwd(), logLevel: 'silent', plugins: [agentMemory({ users: ['ann'] })], server: { port: 0, host: '127.0.0.1' } })
await server.listen()
console.log('PORT ' + server.httpServer.address().port)
`)
  child = spawn(process.execPath, ['serve.mjs'], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  base = await new Promise<string>((resolvePort, reject) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString()
      const found = /PORT (\d+)/.exec(output)
      if (found) resolvePort(`http://127.0.0.1:${found[1]}`)
    }
    child.stdout!.on('data', read)
    child.stderr!.on('data', read)
    child.once('exit', code => reject(new Error(`the fresh app's dev server exited with ${code}: ${output}`)))
  })
}, 180_000)

afterAll(() => {
  child?.kill()
  if (app) rmSync(app, { recursive: true, force: true })
})

test('the packed package serves the studio in a fresh app\'s dev server, with its assets and favicon', async () => {
  const page = await fetch(`${base}/__agents/studio/`)
  expect(page.status).toBe(200)
  const html = await page.text()
  expect(html).toContain('<title>Agent studio</title>')
  const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(html)![1]!
  const asset = await fetch(`${base}/__agents/studio/${script}`)
  expect(asset.status).toBe(200)
  expect(await asset.text()).toContain('Agent studio')
  expect((await fetch(`${base}/__agents/studio/favicon.svg`)).headers.get('content-type')).toBe('image/svg+xml')
  // The app's own page is untouched.
  expect(await (await fetch(`${base}/`)).text()).toContain('the app')
})

test('the studio routes of the packed package answer for the fresh app\'s agent', async () => {
  const agents = await (await fetch(`${base}/__agents/agents`)).json()
  expect(agents.agents.map((agent: { name: string }) => agent.name)).toEqual(['echo'])
  const run = await fetch(`${base}/__agents/agents/echo/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'hello' }) })
  const events = (await run.text()).trim().split('\n').map(line => JSON.parse(line) as { type: string; threadId?: string; text?: string })
  expect(events.at(-1)).toMatchObject({ type: 'finish', text: 'echo: hello' })
  const threads = await (await fetch(`${base}/__agents/agents/echo/threads`)).json()
  expect(threads.threads.map((thread: { title: string }) => thread.title)).toEqual(['hello'])
})

/**
 * The Vite plugin on a real Vite dev server (createServer + listen) over a temporary project,
 * and `agent dev --url` as a real child process driving it.
 */
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { build, createServer, type ViteDevServer } from 'vite'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { agentMemory } from '../../src/vite/index.ts'

const repo = resolve(import.meta.dirname, '../..')
let dir: string
let server: ViteDevServer
let base: string

/** A custom-run agent that replies with `reply`, importing the host from this repository. */
function agentSource(reply: string): string {
  return `import { createWorkspace, defineAgent } from ${JSON.stringify(join(repo, 'src/index.ts'))}
export default defineAgent({
  workspace: createWorkspace({ dir: ${JSON.stringify(join(dir, 'workspace'))} }),
  driver: { run(context) { context.write(${JSON.stringify(reply)} + ': ' + context.input) } },
})
`
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'vam-vite-'))
  mkdirSync(join(dir, 'server', 'agents', 'helper'), { recursive: true })
  writeFileSync(join(dir, 'server', 'agents', 'echo.ts'), agentSource('first'))
  writeFileSync(join(dir, 'server', 'agents', 'helper', 'agent.ts'), agentSource('helper'))
  writeFileSync(join(dir, 'index.html'), '<!doctype html><html><body><script type="module" src="/main.ts"></script></body></html>')
  writeFileSync(join(dir, 'main.ts'), 'document.body.textContent = "app"\n')
  server = await createServer({ root: dir, configFile: false, logLevel: 'silent', plugins: [agentMemory({ users: ['ann', 'ben'] })], server: { port: 0, host: '127.0.0.1' } })
  await server.listen()
  const address = server.httpServer!.address() as { port: number }
  base = `http://127.0.0.1:${address.port}/__agents`
}, 60_000)

afterAll(async () => {
  await server?.close()
  rmSync(dir, { recursive: true, force: true })
})

async function runText(agent: string, input: string, user = 'ann'): Promise<{ status: number; text: string }> {
  const response = await fetch(`${base}/agents/${agent}/runs`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-agent-user': user }, body: JSON.stringify({ input }) })
  if (!response.ok) return { status: response.status, text: await response.text() }
  const events = (await response.text()).trim().split('\n').map(line => JSON.parse(line) as { type: string; text?: string })
  return { status: response.status, text: events.filter(event => event.type === 'text-delta').map(event => event.text).join('') }
}

test('the plugin lists the agents of server/agents, files and folders, named after them', async () => {
  const response = await fetch(`${base}/agents`, { headers: { 'x-agent-user': 'ann' } })
  expect(await response.json()).toEqual({ agents: [{ name: 'echo', driver: 'custom-run', capabilities: [] }, { name: 'helper', driver: 'custom-run', capabilities: [] }] })
})

test('a run streams the agent\'s events as NDJSON through the dev server', async () => {
  expect(await runText('echo', 'hello')).toEqual({ status: 200, text: 'first: hello' })
})

test('an edit to an agent file is picked up by the next request without a restart', async () => {
  writeFileSync(join(dir, 'server', 'agents', 'echo.ts'), agentSource('second'))
  let text = ''
  for (let attempt = 0; attempt < 100 && !text.startsWith('second'); attempt++) {
    text = (await runText('echo', 'again')).text
    if (!text.startsWith('second')) await new Promise(done => setTimeout(done, 100))
  }
  expect(text).toBe('second: again')
})

test('a dev user outside the plugin\'s list is refused with 401 DEV_USER_UNKNOWN', async () => {
  const response = await fetch(`${base}/agents`, { headers: { 'x-agent-user': 'mallory' } })
  expect(response.status).toBe(401)
  expect(((await response.json()) as { error: { code: string } }).error.code).toBe('DEV_USER_UNKNOWN')
})

test('an unknown option of the plugin is an error', () => {
  expect(() => agentMemory({ prefx: '/x' } as never)).toThrow(/PLUGIN_OPTIONS_INVALID/)
})

test('a prefix without a leading slash (no route would match) or "/" alone (every request would) is PLUGIN_OPTIONS_INVALID, as are a bad studio, users or root', () => {
  for (const prefix of ['api', '/', '//', '']) expect(() => agentMemory({ prefix })).toThrow(expect.objectContaining({ code: 'PLUGIN_OPTIONS_INVALID', message: expect.stringContaining('agentMemory() option `prefix` must be a path below / starting with "/"') }))
  expect(() => agentMemory({ studio: 'yes' } as never)).toThrow(/PLUGIN_OPTIONS_INVALID: agentMemory\(\) option `studio` must be true, false or \{ dir: string \}/)
  expect(() => agentMemory({ users: ['ann', ''] })).toThrow(/option `users` must be an array of non-empty user ids/)
  expect(() => agentMemory({ root: 5 } as never)).toThrow(/option `root` must be a non-empty folder path/)
  for (const options of [{ prefix: '/api/agents' }, { prefix: '/api/' }, { studio: false }, { studio: { dir: 'x' } }, { users: [] }]) expect(() => agentMemory(options)).not.toThrow()
})

test('a vite build mounts no agent route and bundles nothing of the agents', async () => {
  const outDir = join(dir, 'dist')
  let configured = false
  const plugin = agentMemory()
  const spy = { ...plugin, configureServer: () => { configured = true } }
  await build({ root: dir, configFile: false, logLevel: 'silent', plugins: [spy], build: { outDir } })
  expect(plugin.apply).toBe('serve')
  expect(configured).toBe(false)
  const files = readdirSync(join(outDir, 'assets'))
  const bundle = files.map(file => readFileSync(join(outDir, 'assets', file), 'utf8')).join('\n')
  expect(bundle).not.toContain('__agents')
  expect(bundle).not.toContain('defineAgent')
})

test('agent dev --url drives the running dev server and prints the same lines as agent dev', async () => {
  const child = spawn(process.execPath, ['--import', 'tsx', join(repo, 'src/cli/main.ts'), 'dev', '--agent', 'helper', '--url', base.replace('/__agents', ''), '--user', 'ben'], { env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] })
  child.stdin.end('hi there\n/exit\n')
  let stdout = ''
  child.stdout.on('data', chunk => { stdout += chunk })
  const code = await new Promise<number | null>(done => child.on('close', done))
  expect(code).toBe(0)
  expect(stdout).toContain('> hi there\nhelper: hi there\n')
})

test('an agent directory\'s memory/ folder is read by the dev server, and an edited file reaches the next run', async () => {
  mkdirSync(join(dir, 'server', 'agents', 'notes', 'memory'), { recursive: true })
  writeFileSync(join(dir, 'server', 'agents', 'notes', 'agent.ts'), `import { defineAgent } from ${JSON.stringify(join(repo, 'src/index.ts'))}
export default defineAgent({
  driver: { async run(context) {
    const outcome = await context.tools.recall_faq.call({})
    context.write(Object.keys(context.tools).join(',') + ' ' + outcome.output.items.map(item => item.text).join(' / '))
  } },
})
`)
  const faq = join(dir, 'server', 'agents', 'notes', 'memory', 'faq.md')
  writeFileSync(faq, '- Support answers within one day.\n')
  expect(await runText('notes', 'hi')).toEqual({ status: 200, text: 'recall_faq Support answers within one day.' })
  writeFileSync(faq, '- Support answers within one hour.\n- Weekends are closed.\n')
  const { utimesSync } = await import('node:fs')
  utimesSync(faq, new Date(), new Date(Date.now() + 5000))
  expect(await runText('notes', 'hi')).toEqual({ status: 200, text: 'recall_faq Support answers within one hour. / Weekends are closed.' })
})

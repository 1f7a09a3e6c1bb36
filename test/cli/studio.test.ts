/**
 * `agent studio` as a real second OS process (`node --import tsx src/cli/main.ts studio`) over
 * the playground's support agent on a temporary workspace: the same routes and dev identity as
 * the Vite plugin, without Vite.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { REPO_ROOT } from './locomo.ts'

const env = { ...process.env, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', SUPPORT_AGENT_DRIVER: 'scripted', NO_COLOR: '1' }
let child: ChildProcess
let studio: string

beforeAll(async () => {
  const workspace = mkdtempSync(join(tmpdir(), 'vam-cli-studio-'))
  child = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/cli/main.ts'), 'studio', '--root', 'playground', '--port', '0', '--users', 'ann,ben'], { cwd: REPO_ROOT, env: { ...env, AGENT_WORKSPACE_DIR: workspace }, stdio: ['ignore', 'pipe', 'pipe'] })
  let output = ''
  studio = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString()
      const found = /Studio: (http:\/\/127\.0\.0\.1:\d+\/__agents\/studio\/)/.exec(output)
      if (found) resolve(found[1]!)
    })
    child.once('exit', code => reject(new Error(`agent studio exited with ${code}: ${output}`)))
  })
}, 60_000)

afterAll(() => {
  child?.kill()
})

test('agent studio serves the agent routes and the studio routes with the dev identity, on loopback', async () => {
  const base = studio.replace(/\/studio\/$/, '')
  expect((await (await fetch(`${base}/agents`)).json()).agents.map((agent: { name: string }) => agent.name)).toEqual(['support'])
  expect((await (await fetch(`${base}/studio-users`)).json()).users).toEqual(['ann', 'ben'])
  const refused = await fetch(`${base}/agents/support/threads`, { headers: { 'x-agent-user': 'mallory' } })
  expect(refused.status).toBe(401)
  expect((await refused.json()).error.code).toBe('DEV_USER_UNKNOWN')

  const run = await fetch(`${base}/agents/support/runs`, { method: 'POST', headers: { 'x-agent-user': 'ben', 'content-type': 'application/json' }, body: JSON.stringify({ input: 'what do you know about studios' }) })
  const events = (await run.text()).trim().split('\n').map(line => JSON.parse(line) as { type: string; threadId?: string })
  const threadId = events[0]!.threadId!
  const threads = await (await fetch(`${base}/agents/support/threads`, { headers: { 'x-agent-user': 'ben' } })).json()
  expect(threads.threads.map((thread: { threadId: string }) => thread.threadId)).toEqual([threadId])
  const journal = await (await fetch(`${base}/agents/support/threads/${threadId}/journal`, { headers: { 'x-agent-user': 'ben' } })).json()
  expect(journal.runs[0].events.map((event: { type: string }) => event.type)).toContain('tool-result')
})

test('agent studio redirects / to the studio and answers for the UI (built, or 503 STUDIO_NOT_BUILT with the fix)', async () => {
  const origin = new URL(studio).origin
  const root = await fetch(`${origin}/`, { redirect: 'manual' })
  expect(root.status).toBe(302)
  expect(root.headers.get('location')).toBe('/__agents/studio/')
  const page = await fetch(studio)
  if (page.status === 503) expect((await page.json()).error.code).toBe('STUDIO_NOT_BUILT')
  else expect(await page.text()).toContain('<title>Agent studio</title>')
})

test('agent studio refuses an unknown option and a bad port', () => {
  const unknown = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/cli/main.ts'), 'studio', '--prot', '1'], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 60_000 })
  expect(unknown.status).toBe(1)
  expect(unknown.stderr).toContain('CLI_UNKNOWN_OPTION: unknown option --prot')
  const port = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/cli/main.ts'), 'studio', '--port', 'eighty'], { cwd: REPO_ROOT, env, encoding: 'utf8', timeout: 60_000 })
  expect(port.status).toBe(1)
  expect(port.stderr).toContain('CLI_INVALID_OPTION')
})

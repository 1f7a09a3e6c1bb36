/**
 * The fs write lease across real processes (src/workspace/file-lease.ts): exclusion of two
 * writers that each take the lease on every write, a holder killed with SIGKILL, a holder that
 * stays alive (also for `appendNow`, the append in the calling turn), and the `<file>.lock`
 * folder an older version (proper-lockfile) leaves behind.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { verifyLog } from '../../src/memory/event-log.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { runRememberLoop } from '../log/fixtures/run-remember-loop.ts'

const HOLDER = fileURLToPath(new URL('./fixtures/lease-holder.ts', import.meta.url))
const dirs: string[] = []
const children: ChildProcess[] = []
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
})
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-lease-'))
  dirs.push(dir)
  return dir
}

/** Starts lease-holder.ts on `key` and resolves once the child holds the lease. */
async function holdLease(dir: string, key: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', HOLDER, dir, key], { stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  let stderr = ''
  child.stderr!.on('data', (chunk) => { stderr += chunk })
  await new Promise<void>((held, fail) => {
    child.stdout!.on('data', (chunk: Buffer) => { if (chunk.toString().includes('held')) held() })
    child.once('exit', code => fail(new Error(`the lease holder exited (${code}) before holding the lease: ${stderr}`)))
  })
  return child
}

const seqs = (text: string) => text.split('\n').filter(Boolean).map(line => (JSON.parse(line) as { seq: number }).seq)

describe('the fs write lease across processes', () => {
  it('2 processes x 60 remembers, each after an idle turn (the lease taken and released on every write), give 120 records with none lost or doubled and a verifying chain', async () => {
    const dir = tempDir()
    await Promise.all([runRememberLoop(dir, 'first', 60, 2), runRememberLoop(dir, 'second', 60, 2)])
    const target = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
    const contents = (await workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true }).export(target)).map(record => record.content)
    const expected = (name: string) => Array.from({ length: 60 }, (_, n) => `${name} ${n}`).sort()
    expect(contents.filter(content => content.startsWith('first ')).sort()).toEqual(expected('first'))
    expect(contents.filter(content => content.startsWith('second ')).sort()).toEqual(expected('second'))
    expect(seqs(readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8'))).toEqual(Array.from({ length: 120 }, (_, n) => n + 1))
    expect(await verifyLog(createWorkspace({ dir }), 'memory:memory.jsonl')).toEqual({ ok: true, lines: 120 })
  }, 60_000)

  it('a holder killed with SIGKILL while it holds the lease leaves nothing to take over: the next conditional append goes through', async () => {
    const dir = tempDir()
    const holder = await holdLease(dir, 'notes.txt')
    const exited = new Promise(done => holder.once('exit', (_code, signal) => done(signal)))
    holder.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    expect(await createWorkspace({ dir }).append('notes.txt', 'after\n', { ifSize: 5 })).toBe(true)
    expect(readFileSync(join(dir, 'notes.txt'), 'utf8')).toBe('held\nafter\n')
    expect(existsSync(join(dir, 'notes.txt.lock'))).toBe(false)
  }, 30_000)

  it('a holder that stays alive keeps the lease: the write ends with WORKSPACE_LOCKED naming the file, and nothing is written', async () => {
    const dir = tempDir()
    const file = join(dir, 'notes.txt')
    const holder = await holdLease(dir, 'notes.txt')
    try {
      const error = await createWorkspace({ dir }).append('notes.txt', 'blocked\n', { ifSize: 5 }).then(() => undefined, (failure: unknown) => failure)
      expect(error).toMatchObject({ code: 'WORKSPACE_LOCKED', details: { lock: file }, fix: expect.stringContaining(`fuser "${file}"`) })
      expect(readFileSync(file, 'utf8')).toBe('held\n')
    }
    finally {
      holder.kill('SIGKILL')
    }
  }, 40_000)

  it('appendNow while another process holds the lease writes nothing and answers undefined; once the holder is killed it appends in the same turn', async () => {
    const dir = tempDir()
    const file = join(dir, 'notes.txt')
    const workspace = createWorkspace({ dir })
    // This process has taken (and, after an idle turn, released) the lease before the holder takes it.
    expect(await workspace.append('notes.txt', '', { ifSize: 0 })).toBe(true)
    await new Promise(done => setImmediate(done))
    const holder = await holdLease(dir, 'notes.txt')
    const exited = new Promise(done => holder.once('exit', (_code, signal) => done(signal)))
    expect(workspace.appendNow!('notes.txt', 'now\n', { ifSize: 5 })).toBeUndefined()
    expect(readFileSync(file, 'utf8')).toBe('held\n')
    holder.kill('SIGKILL')
    expect(await exited).toBe('SIGKILL')
    expect(workspace.appendNow!('notes.txt', 'now\n', { ifSize: 5 })).toBe(true)
    expect(workspace.appendNow!('notes.txt', 'stale\n', { ifSize: 5 })).toBe(false)
    expect(readFileSync(file, 'utf8')).toBe('held\nnow\n')
  }, 40_000)

  it('an older version\'s lock folder left by a killed holder (not refreshed for 10 s) is removed, and the write goes through', async () => {
    const dir = tempDir()
    const folder = join(dir, 'memory/memory.jsonl.lock')
    mkdirSync(folder, { recursive: true })
    const tenSecondsAgo = new Date(Date.now() - 10_000)
    utimesSync(folder, tenSecondsAgo, tenSecondsAgo)
    const adapter = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'a', workspace: createWorkspace({ dir }), writable: true })
    const target = { store: 'agent', scope: { user: 'u' } }
    await adapter.append(target, { kind: 'semantic', content: 'written past the stale folder' }, { audit: { via: 'api' } })
    expect((await adapter.export(target)).map(record => record.content)).toEqual(['written past the stale folder'])
    expect(existsSync(folder)).toBe(false)
  })
})

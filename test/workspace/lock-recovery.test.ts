/**
 * Lock folders of an older version (proper-lockfile, `<file>.lock`) are recovered or reported,
 * never a hang (docs/security.md): a real `.lock` folder dated in the future (a clock jump, a
 * copied workspace) and one that a live holder of that version keeps fresh (proper-lockfile itself).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import lockfile from 'proper-lockfile'
import { afterAll, describe, expect, it } from 'vitest'
import { workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

const dirs: string[] = []
afterAll(() => dirs.forEach(dir => rmSync(dir, { recursive: true, force: true })))
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-lock-'))
  dirs.push(dir)
  return dir
}

describe('stale locks', () => {
  it('a lock folder dated a day in the future is taken over: the next memory write goes through', async () => {
    const dir = tempDir()
    const lock = join(dir, 'memory/memory.jsonl.lock')
    mkdirSync(lock, { recursive: true })
    const tomorrow = new Date(Date.now() + 86_400_000)
    utimesSync(lock, tomorrow, tomorrow)
    const workspace = createWorkspace({ dir })
    const adapter = await workspaceJsonlMemoryStore().create({ workspace, store: 'agent', agent: 'a', writable: true })
    const record = await adapter.append({ store: 'agent', scope: { user: 'u' } }, { kind: 'semantic', content: 'written past the future lock' }, { audit: { via: 'api' } })
    expect((await adapter.read({ store: 'agent', scope: { user: 'u' } }, record.id))?.content).toBe('written past the future lock')
    expect(readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8')).toContain('written past the future lock')
  })

  it('an older version\'s lock another holder keeps fresh ends the write with WORKSPACE_LOCKED naming the folder to remove, and nothing is written', async () => {
    const dir = tempDir()
    const file = join(dir, 'notes.txt')
    const release = await lockfile.lock(file, { realpath: false, lockfilePath: `${file}.lock`, update: 1000, stale: 3000 })
    try {
      const workspace = createWorkspace({ dir })
      const error = await workspace.append('notes.txt', 'blocked\n', { ifSize: 0 }).then(() => undefined, (failure: unknown) => failure)
      expect(error).toMatchObject({ code: 'WORKSPACE_LOCKED', details: { lock: `${file}.lock` }, fix: expect.stringContaining(`remove the folder "${file}.lock"`) })
      expect(await workspace.readText('notes.txt')).toBeUndefined()
    }
    finally {
      await release()
    }
  }, 40_000)
})

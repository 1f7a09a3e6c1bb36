/**
 * A write during compaction, across real processes: a child remembers a record after each idle
 * turn into an fs log (each write a conditional append, `appendNow` when the lease is free in its turn)
 * while this process compacts the same log again and again (a sibling file renamed over it, under
 * the lease). The child is then killed with SIGKILL. Every write the child acknowledged is in the
 * log exactly once, and the chain verifies.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { compactLog, verifyLog } from '../../src/memory/event-log.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

const LOOP = fileURLToPath(new URL('./fixtures/append-loop.ts', import.meta.url))
const dirs: string[] = []
afterAll(() => dirs.forEach(dir => rmSync(dir, { recursive: true, force: true })))

describe('compaction while another process writes', () => {
  it('a log compacted 8 times while another process remembers keeps every acknowledged write once, and the chain verifies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-compact-writes-'))
    dirs.push(dir)
    const child = spawn(process.execPath, ['--import', 'tsx', LOOP, dir, 'idle'], { stdio: ['ignore', 'pipe', 'pipe'] })
    const acknowledged: number[] = []
    let pending = ''
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString()
      const lines = pending.split('\n')
      pending = lines.pop()!
      for (const line of lines) acknowledged.push(Number(line))
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    let exited = false
    const ended = new Promise<NodeJS.Signals | null>(resolve => child.on('exit', (_code, signal) => { exited = true; resolve(signal) }))
    const until = async (count: number) => {
      while (acknowledged.length < count) {
        if (exited) throw new Error(`the writer ended after ${acknowledged.length} writes: ${stderr}`)
        await new Promise(resolve => setTimeout(resolve, 5))
      }
    }
    const workspace = createWorkspace({ dir })
    await until(3)
    const compactions: number[] = []
    for (let round = 0; round < 8; round++) {
      const before = acknowledged.length
      compactions.push((await compactLog(workspace, 'memory/memory.jsonl')).lines)
      // The child wrote between two compactions: each compaction races real writes.
      await until(before + 2)
    }
    child.kill('SIGKILL')
    expect(await ended).toBe('SIGKILL')
    expect(compactions).toHaveLength(8)

    const reader = createWorkspace({ dir })
    const adapter = await workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: reader, writable: true })
    const contents = (await adapter.export({ store: 'agent', scope: { agent: 'support', user: 'alice' } })).map(record => Number(record.content.split(' ')[1]))
    // Every acknowledged write, once each (a write killed before its acknowledgement may be there too).
    expect(contents.slice(0, acknowledged.length)).toEqual(acknowledged)
    expect(new Set(contents).size).toBe(contents.length)
    expect(contents.length - acknowledged.length).toBeLessThanOrEqual(1)
    expect(await verifyLog(reader, 'memory/memory.jsonl')).toMatchObject({ ok: true })
  }, 120_000)
})

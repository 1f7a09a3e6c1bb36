/**
 * Crash safety with a real child process killed with SIGKILL while it appends to an fs memory log.
 */
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import { verifyLog } from '../../src/memory/event-log.ts'
import { fsWorkspace, logLines, tempDir, tornFiles } from './helpers.ts'

const CHILD = fileURLToPath(new URL('./fixtures/append-loop.ts', import.meta.url))
const KEY = 'memory:memory.jsonl'
const target = { store: 'agent', scope: { agent: 'support', user: 'alice' } }

/** Starts the child, waits until `until(acks, lines)` holds, kills it with SIGKILL; returns the acknowledged record numbers. */
async function killWhile(dir: string, mode: 'loop' | 'torn', until: (acks: number[], sawTorn: boolean) => boolean): Promise<number[]> {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, mode], { stdio: ['ignore', 'pipe', 'pipe'] })
  const acks: number[] = []
  let sawTorn = false
  let buffered = ''
  let stderr = ''
  child.stderr.on('data', (chunk) => { stderr += chunk })
  const exited = new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, signal) => done(signal)))
  await new Promise<void>((done, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString()
      const parts = buffered.split('\n')
      buffered = parts.pop()!
      for (const part of parts) part === 'torn' ? (sawTorn = true) : acks.push(Number(part))
      if (until(acks, sawTorn)) {
        child.kill('SIGKILL')
        done()
      }
    })
    child.on('exit', () => fail(new Error(`child exited early: ${stderr}`)))
  })
  expect(await exited).toBe('SIGKILL')
  return acks
}

async function reopen(dir: string) {
  return workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: fsWorkspace(dir), writable: true })
}

describe('a writer killed with SIGKILL in the middle of an append loop', () => {
  it('the log reopens with every acknowledged record, verifies, and accepts new appends that continue the chain', async () => {
    const dir = tempDir()
    const acks = await killWhile(dir, 'loop', (acknowledged) => acknowledged.length >= 40)
    const adapter = await reopen(dir)
    const kept = (await adapter.export(target)).map((record) => Number(record.content.split(' ')[1]))
    // Every acknowledged write survived; at most the writes in flight were added on top, in order.
    expect(kept.slice(0, acks.length)).toEqual(acks)
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => i))
    const added = await adapter.append(target, { kind: 'semantic', content: 'after the crash' }, { audit: { via: 'api' } })
    const lines = logLines(dir)
    expect(lines.at(-1)).toMatchObject({ recordId: added.id, seq: kept.length + 1 })
    expect(lines.map((line) => line.seq)).toEqual(Array.from({ length: kept.length + 1 }, (_, i) => i + 1))
    const verified = await verifyLog(fsWorkspace(dir), KEY)
    expect(verified).toEqual({ ok: true, lines: kept.length + 1 })
  })

  it('a torn last line left by the killed writer is ignored by reads, quarantined by the next append, and the log verifies', async () => {
    const dir = tempDir()
    const acks = await killWhile(dir, 'torn', (_acks, sawTorn) => sawTorn)
    expect(acks).toEqual([0, 1, 2, 3, 4])
    const before = await verifyLog(fsWorkspace(dir), KEY)
    expect(before).toMatchObject({ ok: true, lines: 5, torn: { line: 6 } })
    const adapter = await reopen(dir)
    expect((await adapter.search(target, { query: 'fact', limit: 100 })).length).toBe(5)
    const added = await adapter.append(target, { kind: 'semantic', content: 'after the crash' }, { audit: { via: 'api' } })
    expect(tornFiles(dir)).toHaveLength(1)
    const lines = logLines(dir)
    expect(lines.map((line) => line.seq)).toEqual([1, 2, 3, 4, 5, 6])
    expect(lines[5]).toMatchObject({ recordId: added.id, prev: lines[4]!.digest })
    expect(await verifyLog(fsWorkspace(dir), KEY)).toEqual({ ok: true, lines: 6 })
    // A fresh process state replays the same six records.
    expect((await (await reopen(dir)).export(target)).map((record) => record.content.split(' ').slice(0, 2).join(' '))).toEqual(['fact 0', 'fact 1', 'fact 2', 'fact 3', 'fact 4', 'after the'])
  })
})

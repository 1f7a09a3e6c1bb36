/**
 * Persisted checkpoints of the log state (docs/log-format.md, "Checkpoints"): an open from a
 * checkpoint equals a full replay; a checkpoint that does not match the log is ignored with a
 * warning; lines appended after it (by another process or client) are seen; erasure never leaves
 * erased content in a checkpoint; fs, memory and Redis drivers.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { redisWorkspace, useRedisProbe } from '../helpers/redis.ts'
import { readableCheckpoint, resealCheckpoint } from '../helpers/checkpoint.ts'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { runRememberLoop } from './fixtures/run-remember-loop.ts'
import { openMemoryLog, verifyLog, type MemoryLogWarning } from '../../src/memory/event-log.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import { partitionKey } from '../../src/memory/records.ts'
import type { MemoryTarget } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { Workspace } from '../../src/workspace/types.ts'

const KEY = 'memory:memory.jsonl'
const CHECKPOINT = 'memory:memory.jsonl.checkpoint'
const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const bob: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'bob' } }
const audit = { via: 'api' }

const tempDir = () => mkdtempSync(join(tmpdir(), 'vam-checkpoint-'))
const store = (workspace: Workspace, checkpointEvery?: number | false) => workspaceJsonlMemoryStore(checkpointEvery === undefined ? {} : { checkpointEvery }).create({ store: 'agent', agent: 'support', workspace, writable: true })
/** Waits for the checkpoints the log has scheduled so far (written after the turn of the write). */
const settle = (log: { settled(): Promise<void> }) => log.settled()

/** The whole folded state of a fresh open (records in order, partitions, erased ids), and the warnings it gave. */
async function openState(workspace: Workspace, checkpointEvery?: false) {
  const warnings: MemoryLogWarning[] = []
  const log = openMemoryLog(workspace, KEY, { onWarning: warning => warnings.push(warning), ...(checkpointEvery === false ? { checkpointEvery } : {}) })
  const state = await log.view(state => JSON.parse(JSON.stringify({ records: [...state.records.values()], partitions: [...state.partitions], erased: [...state.erased].sort() })) as unknown)
  return { state, warnings }
}

describe('log checkpoints', () => {
  it('a compaction that erases the record a partition was made by leaves the partitions in the order a replay of the compacted log gives', async () => {
    for (const every of [1, false] as const) {
      const storage = createStorage({ driver: memoryDriver() })
      const live = store(createWorkspace({ storage }), every)
      const first = (await live.append(alice, { kind: 'semantic', content: 'x first', tags: ['alice'] }, { audit })).id
      await live.append(bob, { kind: 'semantic', content: 'x bob', tags: ['bob'] }, { audit })
      await live.append(alice, { kind: 'semantic', content: 'x second', tags: ['alice'] }, { audit })
      await settle(live.log)
      await live.hardDelete(alice, first, { audit })
      await settle(live.log)
      const kept = await live.log.view(state => [...state.partitions.keys()])
      const replay = await openState(createWorkspace({ storage }), false)
      const opened = await openState(createWorkspace({ storage }))
      expect((replay.state as { partitions: Array<[string]> }).partitions.map(([key]) => key)).toEqual([partitionKey('agent', bob.scope), partitionKey('agent', alice.scope)])
      expect(kept).toEqual((replay.state as { partitions: Array<[string]> }).partitions.map(([key]) => key))
      expect(opened.state).toEqual(replay.state)
    }
  })

  it('an open from a checkpoint equals a full replay after any remember, supersede, delete, erase and compaction (property)', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.record({ op: fc.constantFrom('remember', 'remember', 'supersede', 'delete', 'erase', 'compact'), user: fc.constantFrom('alice', 'bob'), pick: fc.nat(), text: fc.string({ maxLength: 12 }) }), { maxLength: 30 }),
      fc.integer({ min: 1, max: 5 }),
      async (steps, every) => {
        const storage = createStorage({ driver: memoryDriver() })
        const live = store(createWorkspace({ storage }), every)
        const ids: string[] = []
        for (const step of steps) {
          const target = step.user === 'alice' ? alice : bob
          const id = ids[step.pick % Math.max(ids.length, 1)]
          if (step.op === 'compact') await live.log.compact()
          else if (step.op === 'remember' || !id) ids.push((await live.append(target, { kind: 'semantic', content: `x ${step.text}`, tags: [step.user] }, { audit })).id)
          else if (step.op === 'supersede') {
            const current = await live.read(target, id)
            if (current?.status === 'active') ids.push((await live.append(target, { kind: 'semantic', content: `y ${step.text}`, supersedes: [id] }, { audit })).id)
          }
          else if (step.op === 'delete') await live.delete(target, id, { audit })
          else await live.hardDelete(target, id, { audit })
          // Let scheduled checkpoints run between some operations, so they land at many offsets.
          if (step.pick % 3 === 0) await settle(live.log)
        }
        await settle(live.log)
        const fromCheckpoint = await openState(createWorkspace({ storage }))
        const replay = await openState(createWorkspace({ storage }), false)
        expect(fromCheckpoint.warnings).toEqual([])
        expect(fromCheckpoint.state).toEqual(replay.state)
        const opened = store(createWorkspace({ storage }))
        const replayed = store(createWorkspace({ storage }), false)
        for (const target of [alice, bob]) {
          expect(await opened.export(target)).toEqual(await replayed.export(target))
          expect(await opened.search(target, { query: 'x', limit: 100 })).toEqual(await replayed.search(target, { query: 'x', limit: 100 }))
        }
        expect((await verifyLog(createWorkspace({ storage }), KEY)).ok).toBe(true)
      },
    ), { numRuns: 40 })
  }, 60_000)

  it('a checkpoint is written after a write once the log grew by checkpointEvery lines, and a cold open replays only the lines after it', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }), 5)
    for (let n = 0; n < 4; n++) await adapter.append(alice, { kind: 'semantic', content: `fact ${n}` }, { audit })
    await settle(adapter.log)
    expect(await createWorkspace({ dir }).has(CHECKPOINT)).toBe(false)
    await adapter.append(alice, { kind: 'semantic', content: 'fact 4' }, { audit })
    await settle(adapter.log)
    const stamp = JSON.parse(readFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), 'utf8').split('\n')[0]!) as { lines: number; offset: number }
    expect(stamp).toMatchObject({ type: 'memory-log-checkpoint', v: 6, lines: 5, offset: readFileSync(join(dir, 'memory/memory.jsonl')).length })
    await adapter.append(alice, { kind: 'semantic', content: 'fact 5' }, { audit })
    // Reads from the workspace show what a cold open reads: the checkpoint's covered line and the lines after it, not the log from byte 0.
    const workspace = createWorkspace({ dir })
    const starts: number[] = []
    const readBytes = workspace.readBytes.bind(workspace)
    workspace.readBytes = async (key, start, end) => {
      if (key === KEY) starts.push(start ?? 0)
      return readBytes(key, start, end)
    }
    expect((await store(workspace).export(alice)).map(record => record.content)).toEqual(['fact 0', 'fact 1', 'fact 2', 'fact 3', 'fact 4', 'fact 5'])
    expect(starts.length).toBeGreaterThan(0)
    expect(Math.min(...starts)).toBeGreaterThan(0)
  })

  it('the interval between checkpoints grows with the log: checkpointEvery lines, or a quarter of the lines the last one covers when that is more', async () => {
    const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
    const log = openMemoryLog(workspace, KEY, { checkpointEvery: 4 })
    const covered: number[] = []
    for (let n = 0; n < 50; n++) {
      await log.write(() => [{ type: 'remember', recordId: `mem_${String(n).padStart(32, '0')}`, store: 'agent', scope: alice.scope, version: 1, at: '2024-05-01T09:30:00.000Z', audit, kind: 'semantic', content: `fact ${n}`, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: '2024-05-01T09:30:00.000Z' }])
      await settle(log)
      const text = await workspace.readText(CHECKPOINT)
      const lines = text === undefined ? 0 : (JSON.parse(text.split('\n')[0]!) as { lines: number }).lines
      if (lines !== (covered.at(-1) ?? 0)) covered.push(lines)
    }
    // From c lines covered, the next checkpoint comes max(4, floor(c / 4)) lines later.
    expect(covered).toEqual([4, 8, 12, 16, 20, 25, 31, 38, 47])
  })

  it('writing the checkpoint of a large state gives the event loop turns: a timer set as it starts runs before it ends, and the checkpoint still equals a replay', async () => {
    const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
    const log = openMemoryLog(workspace, KEY, { checkpointEvery: false })
    const at = '2024-05-01T09:30:00.000Z'
    for (let batch = 0; batch < 24; batch++) {
      await log.write(() => Array.from({ length: 1000 }, (_, n) => ({ type: 'remember' as const, recordId: `mem_${String(batch * 1000 + n).padStart(32, '0')}`, store: 'agent', scope: n % 2 === 0 ? alice.scope : bob.scope, version: 1, at, audit, kind: 'semantic', content: `fact ${batch} ${n}`, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: at })))
    }
    const events: string[] = []
    const written = openMemoryLog(createWorkspace({ storage: workspace.storage }), KEY).checkpoint().then((done) => { events.push('checkpoint'); return done })
    setTimeout(() => events.push('timer'), 0)
    expect(await written).toBe(true)
    expect(events).toEqual(['timer', 'checkpoint'])
    const fromCheckpoint = await openState(createWorkspace({ storage: workspace.storage }))
    expect(fromCheckpoint.warnings).toEqual([])
    expect(fromCheckpoint.state).toEqual((await openState(createWorkspace({ storage: workspace.storage }), false)).state)
  })

  it('a cold open trusts a matching checkpoint for the lines it covers; verifyLog reports a checkpoint whose state the lines do not fold', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }))
    await adapter.append(alice, { kind: 'semantic', content: 'likes tea' }, { audit })
    expect(await adapter.log.checkpoint()).toBe(true)
    const path = join(dir, 'memory/memory.jsonl.checkpoint')
    writeFileSync(path, resealCheckpoint(readableCheckpoint(readFileSync(path, 'utf8')).replace('likes tea', 'likes rum')))
    expect((await store(createWorkspace({ dir })).export(alice)).map(record => record.content)).toEqual(['likes rum'])
    expect((await store(createWorkspace({ dir }), false).export(alice)).map(record => record.content)).toEqual(['likes tea'])
    const verified = await verifyLog(createWorkspace({ dir }), KEY)
    expect(verified).toMatchObject({ ok: false, lines: 1, firstBad: { line: 1 } })
    expect(verified.firstBad!.reason).toMatch(/checkpoint "memory:memory\.jsonl\.checkpoint" does not hold the state of the 1 lines it covers \(record "mem_[0-9a-f]{32}" differs\)/)
    rmSync(path)
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 1 })
  })

  describe('a checkpoint that does not match the log is ignored with a warning (full replay)', () => {
    async function withCheckpoint() {
      const dir = tempDir()
      const adapter = store(createWorkspace({ dir }))
      for (let n = 0; n < 3; n++) await adapter.append(alice, { kind: 'semantic', content: `fact ${n}` }, { audit })
      expect(await adapter.log.checkpoint()).toBe(true)
      return { dir, adapter, log: join(dir, 'memory/memory.jsonl'), checkpoint: join(dir, 'memory/memory.jsonl.checkpoint') }
    }

    it('an edited covered line: the open replays in full and reports the bad line', async () => {
      const { dir, log } = await withCheckpoint()
      writeFileSync(log, readFileSync(log, 'utf8').replace('fact 2', 'fact X'))
      const warnings: MemoryLogWarning[] = []
      const opened = openMemoryLog(createWorkspace({ dir }), KEY, { onWarning: warning => warnings.push(warning) })
      await expect(opened.view(state => state.records.size)).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: { line: 3 } })
      expect(warnings.map(warning => warning.code)).toEqual(['MEMORY_LOG_CHECKPOINT_IGNORED'])
    })

    it('another log with as many lines (rewritten from scratch): the open shows the log, not the checkpoint', async () => {
      const { dir, log } = await withCheckpoint()
      const other = tempDir()
      const writer = store(createWorkspace({ dir: other }), false)
      for (let n = 0; n < 3; n++) await writer.append(alice, { kind: 'semantic', content: `other ${n}` }, { audit })
      writeFileSync(log, readFileSync(join(other, 'memory/memory.jsonl')))
      const { state, warnings } = await openState(createWorkspace({ dir }))
      expect(warnings.map(warning => warning.code)).toEqual(['MEMORY_LOG_CHECKPOINT_IGNORED'])
      expect((state as { records: Array<{ content: string }> }).records.map(record => record.content)).toEqual(['other 0', 'other 1', 'other 2'])
    })

    it('a truncated log', async () => {
      const { dir, log } = await withCheckpoint()
      const text = readFileSync(log, 'utf8')
      writeFileSync(log, text.slice(0, text.indexOf('\n') + 1))
      const { state, warnings } = await openState(createWorkspace({ dir }))
      expect(warnings[0]).toMatchObject({ code: 'MEMORY_LOG_CHECKPOINT_IGNORED', details: { checkpoint: CHECKPOINT } })
      expect((state as { records: unknown[] }).records).toHaveLength(1)
    })

    it('a compacted log (an old checkpoint put back after an erasure and compaction)', async () => {
      const { dir, adapter, checkpoint } = await withCheckpoint()
      const old = readFileSync(checkpoint, 'utf8')
      const [first] = await adapter.export(alice)
      expect(await adapter.hardDelete(alice, first!.id, { audit })).toBe(true)
      writeFileSync(checkpoint, old)
      const { state, warnings } = await openState(createWorkspace({ dir }))
      expect(warnings.map(warning => warning.code)).toEqual(['MEMORY_LOG_CHECKPOINT_IGNORED'])
      expect((state as { records: Array<{ content: string }> }).records.map(record => record.content)).toEqual(['fact 1', 'fact 2'])
    })

    it('a torn or garbled checkpoint (a crash of a driver without atomic replace)', async () => {
      const { dir, checkpoint } = await withCheckpoint()
      const text = readFileSync(checkpoint, 'utf8')
      writeFileSync(checkpoint, text.slice(0, text.length - 40))
      const { state, warnings } = await openState(createWorkspace({ dir }))
      expect(warnings.map(warning => warning.code)).toEqual(['MEMORY_LOG_CHECKPOINT_IGNORED'])
      expect((state as { records: unknown[] }).records).toHaveLength(3)
    })
  })

  it('lines another process appended after the checkpoint are seen at a cold open', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }))
    await adapter.append(alice, { kind: 'semantic', content: 'mine' }, { audit })
    expect(await adapter.log.checkpoint()).toBe(true)
    await runRememberLoop(dir, 'other', 3)
    const { state, warnings } = await openState(createWorkspace({ dir }))
    expect(warnings).toEqual([])
    expect((state as { records: Array<{ content: string }> }).records.map(record => record.content)).toEqual(['mine', 'other 0', 'other 1', 'other 2'])
  }, 30_000)

  it('a checkpoint is not written when another writer appended after the state it would hold', async () => {
    const storage = createStorage({ driver: memoryDriver() })
    const workspace = createWorkspace({ storage })
    const adapter = store(workspace)
    await adapter.append(alice, { kind: 'semantic', content: 'a' }, { audit })
    expect(await workspace.replace(CHECKPOINT, 'x', { ifSizeOf: { key: KEY, size: 1 } })).toBe(false)
    const size = (await workspace.stat(KEY))!.size
    expect(await workspace.replace(CHECKPOINT, 'x', { ifSizeOf: { key: KEY, size } })).toBe(true)
  })

  it('erase + compaction never leaves erased content in a checkpoint, even one written before the erase', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }), 2)
    const secret = await adapter.append(alice, { kind: 'profile', content: 'card 4111-SECRET', title: 'SECRET title', tags: ['SECRET-tag'] }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'likes tea' }, { audit })
    await settle(adapter.log)
    const checkpoint = join(dir, 'memory/memory.jsonl.checkpoint')
    expect(readableCheckpoint(readFileSync(checkpoint, 'utf8'))).toContain('SECRET')
    expect(await adapter.hardDelete(alice, secret.id, { audit })).toBe(true)
    await settle(adapter.log)
    expect(readableCheckpoint(readFileSync(checkpoint, 'utf8'))).not.toContain('SECRET')
    expect(readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8')).not.toContain('SECRET')
    const { state, warnings } = await openState(createWorkspace({ dir }))
    expect(warnings).toEqual([])
    expect(JSON.stringify(state)).not.toContain('SECRET')
    expect((state as { erased: string[] }).erased).toEqual([secret.id])
  })

  it('the in-memory store writes no checkpoint', async () => {
    const storage = createStorage({ driver: memoryDriver() })
    const log = openMemoryLog(createWorkspace({ storage }), KEY, { checkpointEvery: false })
    expect(await log.checkpoint()).toBe(false)
  })
})

describe('log checkpoints on Redis', () => {
  const prefix = `vam-checkpoint-${process.pid}-${Date.now()}`
  const redis = useRedisProbe(prefix, 'Redis checkpoint tests')

  it('a checkpoint on Redis: written next to the log, an open from it equals a replay, another client\'s later lines are seen, a stale one is ignored', async (context) => {
    if (!redis.probe) return context.skip()
    const base = `${prefix}:a`
    const first = redisWorkspace(base)
    const adapter = store(first, 3)
    for (let n = 0; n < 3; n++) await adapter.append(alice, { kind: 'semantic', content: `first ${n}` }, { audit })
    await settle(adapter.log)
    expect(await redis.probe!.exists(`${base}:memory:memory.jsonl.checkpoint`)).toBe(1)
    const second = redisWorkspace(base)
    await store(second).append(bob, { kind: 'semantic', content: 'second 0' }, { audit })
    const [third, fourth, fifth] = [redisWorkspace(base), redisWorkspace(base), redisWorkspace(base)]
    const opened = await openState(third)
    expect(opened.warnings).toEqual([])
    expect(opened.state).toEqual((await openState(fourth, false)).state)
    expect((opened.state as { records: unknown[] }).records).toHaveLength(4)
    // Truncated to its first line behind the engine's back: the checkpoint covers more than the log holds.
    const text = (await redis.probe!.get(`${base}:memory:memory.jsonl`))!
    await redis.probe!.set(`${base}:memory:memory.jsonl`, text.slice(0, text.indexOf('\n') + 1))
    // The head anchor (written 50 ms after a write) would report the cut itself: this checks the checkpoint's own test.
    await redis.probe!.del(`${base}:memory:memory.jsonl.head`)
    const stale = await openState(fifth)
    expect(stale.warnings.map(warning => warning.code)).toEqual(['MEMORY_LOG_CHECKPOINT_IGNORED'])
    expect((stale.state as { records: unknown[] }).records).toHaveLength(1)
    for (const workspace of [first, second, third, fourth, fifth]) await workspace.storage.dispose()
  }, 30_000)
})

/**
 * The log engine: concurrency in one process, across processes (fs) and across Redis
 * clients; replay equals live state (property test); hard delete removes content bytes while
 * the chain verifies; tailing reads only appended bytes; compaction and `agent memory verify`.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { redisWorkspace, useRedisProbe } from '../helpers/redis.ts'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { runRememberLoop } from './fixtures/run-remember-loop.ts'
import { compactLog, openMemoryLog, verifyLog } from '../../src/memory/event-log.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryTarget } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { Workspace } from '../../src/workspace/types.ts'

const KEY = 'memory:memory.jsonl'
const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const bob: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'bob' } }
const audit = { via: 'api' }

const tempDir = () => mkdtempSync(join(tmpdir(), 'vam-engine-'))
const store = (workspace: Workspace) => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace, writable: true })
const seqs = (text: string) => text.split('\n').filter(Boolean).map(line => (JSON.parse(line) as { seq: number }).seq)
const range = (count: number) => Array.from({ length: count }, (_, index) => index + 1)

describe('log engine concurrency', () => {
  it('200 concurrent remembers in one process give 200 records, a gap-free seq and a verifying chain', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }))
    await Promise.all(Array.from({ length: 200 }, (_, n) => adapter.append(alice, { kind: 'semantic', content: `fact ${n}` }, { audit })))
    expect(await adapter.export(alice)).toHaveLength(200)
    expect(seqs(readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8'))).toEqual(range(200))
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 200 })
  })

  it('2 processes x 100 remembers on one fs log give 200 records, a gap-free seq and a verifying chain', async () => {
    const dir = tempDir()
    await Promise.all([runRememberLoop(dir, 'first', 100), runRememberLoop(dir, 'second', 100)])
    const contents = (await store(createWorkspace({ dir })).export(alice)).map(record => record.content)
    expect(contents.filter(content => content.startsWith('first ')).sort()).toEqual(range(100).map(n => `first ${n - 1}`).sort())
    expect(contents.filter(content => content.startsWith('second ')).sort()).toEqual(range(100).map(n => `second ${n - 1}`).sort())
    expect(seqs(readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8'))).toEqual(range(200))
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 200 })
  }, 60_000)

  it('a store sees the lines another process appended at its next operation', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }))
    await adapter.append(alice, { kind: 'semantic', content: 'mine' }, { audit })
    await runRememberLoop(dir, 'other', 3)
    expect((await adapter.export(alice)).map(record => record.content)).toEqual(['mine', 'other 0', 'other 1', 'other 2'])
  }, 30_000)
})

describe('log engine on Redis', () => {
  const prefix = `vam-test-${process.pid}-${Date.now()}`
  const redis = useRedisProbe(prefix, 'Redis tests')

  it('2 instances x 100 remembers on one Redis key give 200 records, a gap-free seq and a verifying chain', async (context) => {
    if (!redis.probe) return context.skip()
    const base = `${prefix}:two`
    const first = redisWorkspace(base)
    const second = redisWorkspace(base)
    const write = (workspace: Workspace, name: string) => (async () => {
      const adapter = store(workspace)
      for (let n = 0; n < 100; n++) await adapter.append(alice, { kind: 'semantic', content: `${name} ${n}` }, { audit })
    })()
    await Promise.all([write(first, 'first'), write(second, 'second')])
    const fresh = redisWorkspace(base)
    expect(await store(fresh).export(alice)).toHaveLength(200)
    expect(seqs((await fresh.readText(KEY))!)).toEqual(range(200))
    expect(await verifyLog(fresh, KEY)).toEqual({ ok: true, lines: 200 })
    for (const workspace of [first, second, fresh]) await workspace.storage.dispose()
  }, 60_000)

  it('the Redis workspace appends natively and tails with GETRANGE', async (context) => {
    if (!redis.probe) return context.skip()
    const workspace = redisWorkspace(`${prefix}:native`)
    expect(await workspace.append('log.jsonl', 'a\n')).toBe(true)
    expect(await workspace.append('log.jsonl', 'é\n', { ifSize: 2 })).toBe(true)
    expect(await workspace.append('log.jsonl', 'x\n', { ifSize: 2 })).toBe(false)
    expect(await workspace.stat('log.jsonl')).toEqual({ size: 5 })
    expect(Buffer.from((await workspace.readBytes('log.jsonl', 2))!).toString('utf8')).toBe('é\n')
    expect(await redis.probe!.get(`${prefix}:native:log.jsonl`)).toBe('a\né\n')
    await workspace.storage.dispose()
  })
})

describe('log engine state', () => {
  it('replaying the log equals the live state after any sequence of remember, supersede, delete and hard delete (property)', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.record({ op: fc.constantFrom('remember', 'supersede', 'delete', 'erase'), user: fc.constantFrom('alice', 'bob'), pick: fc.nat(), text: fc.string({ maxLength: 12 }) }), { maxLength: 25 }),
      async (steps) => {
        const storage = createStorage({ driver: memoryDriver() })
        const live = store(createWorkspace({ storage }))
        const ids: string[] = []
        for (const step of steps) {
          const target = step.user === 'alice' ? alice : bob
          const id = ids[step.pick % Math.max(ids.length, 1)]
          if (step.op === 'remember' || !id) ids.push((await live.append(target, { kind: 'semantic', content: `x ${step.text}` }, { audit })).id)
          else if (step.op === 'supersede') {
            const current = await live.read(target, id)
            if (current?.status === 'active') ids.push((await live.append(target, { kind: 'semantic', content: `y ${step.text}`, supersedes: [id] }, { audit })).id)
          }
          else if (step.op === 'delete') await live.delete(target, id, { audit })
          else await live.hardDelete(target, id, { audit })
        }
        const replay = store(createWorkspace({ storage }))
        for (const target of [alice, bob]) {
          expect(await replay.export(target)).toEqual(await live.export(target))
          expect(await replay.search(target, { query: 'x', limit: 100 })).toEqual(await live.search(target, { query: 'x', limit: 100 }))
        }
        expect((await verifyLog(createWorkspace({ storage }), KEY)).ok).toBe(true)
      },
    ), { numRuns: 40 })
  })

  it('a hard-deleted record\'s content is absent from the stored bytes and verifyLog still passes', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }))
    const secret = await adapter.append(alice, { kind: 'profile', content: 'my card number is 4111-SECRET', title: 'card SECRET', tags: ['SECRET-tag'], metadata: { note: 'SECRET meta' } }, { audit })
    await adapter.delete(alice, secret.id, { audit, reason: 'asked' })
    const kept = await adapter.append(alice, { kind: 'semantic', content: 'likes tea', supersedes: [] }, { audit })
    const file = join(dir, 'memory/memory.jsonl')
    expect(readFileSync(file, 'utf8')).toContain('SECRET')
    expect(await adapter.hardDelete(alice, secret.id, { audit, reason: 'right to erasure' })).toBe(true)
    expect(readFileSync(file, 'utf8')).not.toContain('SECRET')
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 4 })
    expect(await adapter.read(alice, secret.id)).toBeUndefined()
    expect((await adapter.export(alice)).map(record => record.id)).toEqual([kept.id])
    const reopened = store(createWorkspace({ dir }))
    expect((await reopened.export(alice)).map(record => record.id)).toEqual([kept.id])
    expect(await reopened.search(alice, { query: 'card' })).toEqual([])
    expect(await adapter.hardDelete(bob, kept.id, { audit })).toBe(false)
  })

  it('hard delete of a record in a version 1 log re-chains it as version 3 and the log verifies', async () => {
    const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
    // A version 1 line written the way the foundation engine wrote it.
    const { canonicalJson, sha256Hex } = await import('../../src/log/index.ts')
    const at = '2024-01-01T00:00:00.000Z'
    const line = { v: 1, seq: 1, prev: null, type: 'remember', recordId: 'mem_0123456789abcdef0123456789abcdef', store: 'agent', scope: alice.scope, version: 1, at, audit, kind: 'semantic', content: 'old SECRET', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: at }
    await workspace.append(KEY, `${canonicalJson({ ...line, digest: await sha256Hex(canonicalJson(line)) })}\n`)
    expect(await verifyLog(workspace, KEY)).toEqual({ ok: true, lines: 1 })
    const adapter = store(workspace)
    expect(await adapter.hardDelete(alice, line.recordId, { audit })).toBe(true)
    const text = (await workspace.readText(KEY))!
    expect(text).not.toContain('SECRET')
    expect(text.split('\n').filter(Boolean).map(entry => (JSON.parse(entry) as { v: number }).v)).toEqual([3, 3])
    expect(await verifyLog(workspace, KEY)).toEqual({ ok: true, lines: 2 })
  })

  it('compactLog keeps every event and the chain, and a second store notices the rewrite', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }))
    for (let n = 0; n < 5; n++) await adapter.append(alice, { kind: 'semantic', content: `fact ${n}` }, { audit })
    const other = store(createWorkspace({ dir }))
    expect(await other.export(alice)).toHaveLength(5)
    const result = await compactLog(createWorkspace({ dir }), KEY)
    expect(result).toMatchObject({ lines: 5, erasedLines: 0, rechained: false })
    expect(result.bytesAfter).toBe(result.bytesBefore)
    await adapter.append(alice, { kind: 'semantic', content: 'after' }, { audit })
    expect((await other.export(alice)).map(record => record.content)).toEqual(['fact 0', 'fact 1', 'fact 2', 'fact 3', 'fact 4', 'after'])
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 6 })
  })

  it('after the first operation, a read of a grown log reads only the appended bytes', async () => {
    const dir = tempDir()
    const base = createWorkspace({ dir })
    const starts: number[] = []
    const counted: Workspace = { ...base, readBytes: async (key, start, end) => { if (key === KEY) starts.push(start ?? 0); return base.readBytes(key, start, end) } }
    const log = openMemoryLog(counted, KEY)
    const writer = store(createWorkspace({ dir }))
    await writer.append(alice, { kind: 'semantic', content: 'one' }, { audit })
    await log.view(state => state.records.size)
    const size = (await base.stat(KEY))!.size
    await writer.append(alice, { kind: 'semantic', content: 'two' }, { audit })
    expect(await log.view(state => state.records.size)).toBe(2)
    expect(starts).toEqual([0, size])
  })

  it('a corrupt middle line fails reads loudly, and readPastCorruption reads past it with a warning but refuses writes', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }))
    for (const content of ['one', 'two', 'three']) await adapter.append(alice, { kind: 'semantic', content }, { audit })
    const file = join(dir, 'memory/memory.jsonl')
    const lines = readFileSync(file, 'utf8').split('\n')
    lines[1] = lines[1]!.replace('"two"', '"TWO"')
    const { writeFileSync } = await import('node:fs')
    writeFileSync(file, lines.join('\n'))
    await expect(store(createWorkspace({ dir })).export(alice)).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: { line: 2 } })
    const warnings: string[] = []
    const tolerant = workspaceJsonlMemoryStore({ readPastCorruption: true }).create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true })
    const { openMemoryLog: open } = await import('../../src/memory/event-log.ts')
    void open
    const originalWarn = console.warn
    console.warn = (message: string) => { warnings.push(message) }
    try {
      expect((await tolerant.export(alice)).map(record => record.content)).toEqual(['one', 'three'])
    }
    finally {
      console.warn = originalWarn
    }
    expect(warnings.join('\n')).toContain('MEMORY_LOG_LINE_SKIPPED')
    await expect(tolerant.append(alice, { kind: 'semantic', content: 'four' }, { audit })).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT' })
  })
})

import { createHash } from 'node:crypto'
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { afterAll, describe, expect, it } from 'vitest'
import { canonicalJson } from '../../../src/log/index.ts'
import { verifyLog } from '../../../src/memory/event-log.ts'
import { workspaceJsonlMemoryStore } from '../../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryAudit, MemoryStoreAdapter, MemoryStoreContext, MemoryTarget } from '../../../src/memory/types.ts'
import type { Workspace } from '../../../src/workspace/types.ts'
import { createWorkspace } from '../../../src/workspace/workspace.ts'
import { expectTurnsDuring } from '../../helpers/event-loop-turns.ts'

const audit: MemoryAudit = { via: 'tool', agent: 'support', runId: 'run_1', threadId: 'thread_1', user: 'alice' }
const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const bob: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'bob' } }
const context = (workspace: Workspace | undefined, writable = true): MemoryStoreContext => ({ store: 'agent', agent: 'support', writable, workspace })

const folders: string[] = []
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-jsonl-'))
  folders.push(dir)
  return dir
}

function fsWorkspace(dir: string, writable = true): Workspace {
  return createWorkspace({ storage: createStorage({ driver: fsDriver({ base: dir }) }), writable })
}

/** A fresh fs workspace with the default store's adapter; `reopen` gives an adapter over a new workspace object on the same folder. */
function setup(path?: string) {
  const dir = tempDir()
  const factory = workspaceJsonlMemoryStore(path === undefined ? {} : { path })
  const workspace = fsWorkspace(dir)
  const adapter = factory.create(context(workspace)) as MemoryStoreAdapter
  const file = join(dir, ...factory.path.split('/'))
  const reopen = () => factory.create(context(fsWorkspace(dir))) as MemoryStoreAdapter
  const lines = () => readFileSync(file, 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line) as Record<string, unknown>)
  return { dir, factory, workspace, adapter, file, reopen, lines }
}

describe('workspaceJsonlMemoryStore options', () => {
  it('path defaults to memory/memory.jsonl in the workspace', () => {
    const factory = workspaceJsonlMemoryStore()
    expect(factory).toMatchObject({ kind: 'workspace-jsonl', path: 'memory/memory.jsonl', key: 'memory:memory.jsonl' })
  })

  it('a custom path writes to that workspace file', async () => {
    const { adapter, file, lines } = setup('agents/support/notes.jsonl')
    await adapter.append(alice, { kind: 'semantic', content: 'custom path' }, { audit })
    expect(file.endsWith(join('agents', 'support', 'notes.jsonl'))).toBe(true)
    expect(lines().map(line => line.content)).toEqual(['custom path'])
  })

  it.each([
    ['/etc/memory.jsonl', 'absolute'],
    ['C:/memory.jsonl', 'absolute'],
    ['../memory.jsonl', '..'],
    ['memory/../../x.jsonl', '..'],
    ['memory/notes.json', '.jsonl'],
    ['memory/.jsonl', '.jsonl'],
    ['memory:notes.jsonl', ':'],
    ['memory\\notes.jsonl', ':'],
    ['memory//notes.jsonl', 'empty'],
    ['./memory.jsonl', 'empty'],
    ['', 'non-empty'],
  ])('path %j is rejected with MEMORY_STORE_PATH_INVALID', (path, why) => {
    expect(() => workspaceJsonlMemoryStore({ path })).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_PATH_INVALID', why: expect.stringContaining(why) }))
  })

  it('an unknown option key is an error, not ignored', () => {
    expect(() => workspaceJsonlMemoryStore({ pth: 'x.jsonl' } as never)).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_OPTIONS_INVALID' }))
  })

  it('create without a workspace throws MEMORY_WORKSPACE_REQUIRED with a fix', () => {
    expect(() => workspaceJsonlMemoryStore().create(context(undefined))).toThrow(expect.objectContaining({ code: 'MEMORY_WORKSPACE_REQUIRED', fix: expect.stringContaining('workspace') }))
  })

  it('create for a writable store on a read-only workspace throws MEMORY_WORKSPACE_READ_ONLY', () => {
    expect(() => workspaceJsonlMemoryStore().create(context(fsWorkspace(tempDir(), false)))).toThrow(expect.objectContaining({ code: 'MEMORY_WORKSPACE_READ_ONLY' }))
  })

  it('a read-only store on a read-only workspace reads records, and its append throws MEMORY_WORKSPACE_READ_ONLY', async () => {
    const { dir, adapter } = setup()
    const saved = await adapter.append(alice, { kind: 'semantic', content: 'readable' }, { audit })
    const reader = await workspaceJsonlMemoryStore().create(context(fsWorkspace(dir, false), false))
    expect((await reader.read(alice, saved.id))?.content).toBe('readable')
    await expect(reader.append(alice, { kind: 'semantic', content: 'nope' }, { audit })).rejects.toMatchObject({ code: 'MEMORY_WORKSPACE_READ_ONLY' })
  })
})

describe('workspaceJsonlMemoryStore file', () => {
  it('the file has one line per event with store, scope, version, seq, prev and digest', async () => {
    const { adapter, lines } = setup()
    const first = await adapter.append(alice, { kind: 'profile', content: 'likes jazz', provenance: { runId: 'run_1', source: 'tool', toolName: 'memory_remember' } }, { audit })
    const second = await adapter.append(alice, { kind: 'profile', content: 'likes blues', supersedes: [first.id] }, { audit })
    await adapter.delete(alice, second.id, { audit, reason: 'wrong' })
    const events = lines()
    expect(events.map(event => [event.seq, event.type, event.recordId, event.version])).toEqual([
      [1, 'remember', first.id, 1],
      [2, 'remember', second.id, 1],
      [3, 'supersede', first.id, 2],
      [4, 'delete', second.id, 2],
    ])
    for (const event of events) {
      expect(event).toMatchObject({ v: 3, store: 'agent', scope: { agent: 'support', user: 'alice' }, audit })
      expect(event.digest).toMatch(/^[0-9a-f]{64}$/)
      expect(Number.isNaN(Date.parse(event.at as string))).toBe(false)
    }
    expect(events[0]).toMatchObject({ prev: null, content: 'likes jazz', kind: 'profile', provenance: { runId: 'run_1', source: 'tool', toolName: 'memory_remember' } })
    expect(events[2]).toMatchObject({ supersededBy: second.id })
    expect(events[3]).toMatchObject({ reason: 'wrong' })
  })

  it('version 3 digests: SHA-256 of the canonical header with the payload digest (computed, not written), default payload members left out, each prev the previous digest', async () => {
    const { adapter, lines } = setup()
    const one = await adapter.append(alice, { kind: 'semantic', content: 'ünïcödé ✓ 🎉', metadata: { z: 1, a: [2, { y: 'x' }] } }, { audit })
    await adapter.append(bob, { kind: 'semantic', content: 'two', tags: ['t'], pinned: true, createdAt: '2023-05-07T13:00:00.000Z' }, { audit })
    await adapter.delete(alice, one.id, { audit })
    const sha = (value: unknown) => createHash('sha256').update(canonicalJson(value), 'utf8').digest('hex')
    const headerFields = ['v', 'seq', 'prev', 'more', 'type', 'store', 'scope', 'recordId', 'version', 'at', 'audit', 'payloadDigest']
    let prev: unknown = null
    const written = lines()
    for (const { digest, ...rest } of written) {
      expect(rest.prev).toBe(prev)
      expect(rest.payloadDigest).toBeUndefined()
      const header = Object.fromEntries(Object.entries(rest).filter(([field]) => headerFields.includes(field)))
      const payload = Object.fromEntries(Object.entries(rest).filter(([field]) => !headerFields.includes(field)))
      expect(digest).toBe(sha({ ...header, payloadDigest: sha(payload) }))
      prev = digest
    }
    // Defaults (no tags, metadata, provenance, supersedes; not pinned; created when written) are left out; other values are written.
    expect(Object.keys(written[0]!).filter(field => !headerFields.includes(field)).sort()).toEqual(['content', 'digest', 'kind', 'metadata'])
    expect(written[1]).toMatchObject({ tags: ['t'], pinned: true, createdAt: '2023-05-07T13:00:00.000Z' })
    expect(written[1]).not.toHaveProperty('metadata')
    // Read back, the records have every member.
    expect(await adapter.read(alice, one.id)).toMatchObject({ tags: [], metadata: { z: 1, a: [2, { y: 'x' }] }, pinned: false, supersedes: [], provenance: {}, createdAt: written[0]!.at })
    expect(await verifyLog(fsWorkspace(setup().dir), 'memory:memory.jsonl')).toEqual({ ok: true, lines: 0 })
  })

  it('each line is written as canonical JSON (sorted keys, no whitespace)', async () => {
    const { adapter, file } = setup()
    await adapter.append(alice, { kind: 'semantic', content: 'canonical', metadata: { b: 1, a: 2 } }, { audit })
    const [line] = readFileSync(file, 'utf8').split('\n')
    expect(line).toBe(canonicalJson(JSON.parse(line!)))
  })

  it('a delete appends a tombstone and keeps the original line', async () => {
    const { adapter, file } = setup()
    const saved = await adapter.append(alice, { kind: 'semantic', content: 'to forget' }, { audit })
    const before = readFileSync(file, 'utf8')
    await adapter.delete(alice, saved.id, { audit, reason: 'asked' })
    const after = readFileSync(file, 'utf8')
    expect(after.startsWith(before)).toBe(true)
    const tombstone = JSON.parse(after.slice(before.length)) as Record<string, unknown>
    expect(tombstone).toMatchObject({ type: 'delete', recordId: saved.id, version: 2, reason: 'asked', seq: 2 })
    expect(tombstone.content).toBeUndefined()
  })

  it('a remember with supersedes is one write: all lines but the last carry more: true', async () => {
    const { adapter, lines } = setup()
    const a = await adapter.append(alice, { kind: 'semantic', content: 'a' }, { audit })
    const b = await adapter.append(alice, { kind: 'semantic', content: 'b' }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'c', supersedes: [a.id, b.id] }, { audit })
    expect(lines().map(line => [line.type, line.more])).toEqual([
      ['remember', undefined],
      ['remember', undefined],
      ['remember', true],
      ['supersede', true],
      ['supersede', undefined],
    ])
  })

  it('a failed supersede writes no line', async () => {
    const { adapter, file } = setup()
    await adapter.append(alice, { kind: 'semantic', content: 'a' }, { audit })
    const before = readFileSync(file, 'utf8')
    await expect(adapter.append(alice, { kind: 'semantic', content: 'b', supersedes: ['mem_nope'] }, { audit })).rejects.toMatchObject({ code: 'MEMORY_SUPERSEDE_NOT_FOUND' })
    expect(readFileSync(file, 'utf8')).toBe(before)
  })

  it('50 parallel appends into one scope give 50 records and a gap-free seq', async () => {
    const { adapter, reopen, lines } = setup()
    await Promise.all(Array.from({ length: 50 }, (_, index) => adapter.append(alice, { kind: 'semantic', content: `note ${index}` }, { audit })))
    expect(lines().map(line => line.seq)).toEqual(Array.from({ length: 50 }, (_, index) => index + 1))
    expect(await reopen().export(alice)).toHaveLength(50)
    expect(await verifyLog(fsWorkspace(setup().dir), 'memory:memory.jsonl')).toMatchObject({ ok: true })
  })

  it('parallel appends through two workspace objects over one folder keep one chain', async () => {
    const { dir, adapter, reopen } = setup()
    const other = reopen()
    await Promise.all(Array.from({ length: 20 }, (_, index) => (index % 2 ? adapter : other).append(alice, { kind: 'semantic', content: `n${index}` }, { audit })))
    expect(await adapter.export(alice)).toHaveLength(20)
    expect(await other.export(alice)).toHaveLength(20)
    expect(await verifyLog(fsWorkspace(dir), 'memory:memory.jsonl')).toEqual({ ok: true, lines: 20 })
  })

  it('records persist: a new workspace object over the same folder replays them', async () => {
    const { adapter, reopen } = setup()
    const saved = await adapter.append(alice, { kind: 'semantic', content: 'durable' }, { audit })
    const replayed = reopen()
    expect(await replayed.read(alice, saved.id)).toEqual(saved)
  })

  it('a store sees lines appended by another workspace object since its last operation', async () => {
    const { adapter, reopen } = setup()
    await adapter.search(alice, { query: 'x' })
    const saved = await reopen().append(alice, { kind: 'semantic', content: 'from elsewhere' }, { audit })
    expect((await adapter.search(alice, { query: 'elsewhere' })).map(hit => hit.record.id)).toEqual([saved.id])
  })
})

describe('workspaceJsonlMemoryStore crash leftovers and corruption', () => {
  it('a torn last line is quarantined, the next append starts on a fresh line and the log verifies', async () => {
    const { dir, adapter, file, reopen } = setup()
    const kept = await adapter.append(alice, { kind: 'semantic', content: 'kept' }, { audit })
    const torn = '{"v":1,"seq":2,"type":"remember","store":"agent","content":"half'
    appendFileSync(file, torn)
    // Reads ignore the torn tail and do not touch the file.
    expect((await adapter.search(alice, { query: 'kept' })).map(hit => hit.record.id)).toEqual([kept.id])
    expect(readFileSync(file, 'utf8').endsWith(torn)).toBe(true)
    const next = await adapter.append(alice, { kind: 'semantic', content: 'after the crash' }, { audit })
    const text = readFileSync(file, 'utf8')
    expect(text).not.toContain('half')
    expect(text.split('\n').filter(Boolean).map(line => (JSON.parse(line) as { seq: number }).seq)).toEqual([1, 2])
    const quarantined = readdirSync(join(dir, 'memory')).filter(name => name.startsWith('memory.jsonl.torn-'))
    expect(quarantined).toHaveLength(1)
    expect(readFileSync(join(dir, 'memory', quarantined[0]!), 'utf8')).toBe(torn)
    expect(await verifyLog(fsWorkspace(dir), 'memory:memory.jsonl')).toEqual({ ok: true, lines: 2 })
    expect((await reopen().export(alice)).map(record => record.id)).toEqual([kept.id, next.id])
  })

  it('a torn line found on first open (fresh process state) is quarantined before the next append', async () => {
    const { dir, adapter, file, reopen } = setup()
    await adapter.append(alice, { kind: 'semantic', content: 'one' }, { audit })
    appendFileSync(file, '{"v":1,"se')
    expect(await verifyLog(fsWorkspace(dir), 'memory:memory.jsonl')).toEqual({ ok: true, lines: 1, torn: { line: 2, bytes: 10 } })
    const fresh = reopen()
    await fresh.append(alice, { kind: 'semantic', content: 'two' }, { audit })
    expect(await verifyLog(fsWorkspace(dir), 'memory:memory.jsonl')).toEqual({ ok: true, lines: 2 })
  })

  it('an unfinished multi-line write at the end is moved aside whole: no half-applied supersede', async () => {
    const { dir, adapter, file, reopen } = setup()
    const a = await adapter.append(alice, { kind: 'semantic', content: 'a' }, { audit })
    const before = readFileSync(file, 'utf8')
    await adapter.append(alice, { kind: 'semantic', content: 'b', supersedes: [a.id] }, { audit })
    // Simulate a crash after the first line of that write: drop its last line.
    const full = readFileSync(file, 'utf8')
    const withoutLast = full.slice(0, full.lastIndexOf('\n', full.length - 2) + 1)
    writeFileSync(file, withoutLast)
    const fresh = reopen()
    expect((await fresh.export(alice)).map(record => [record.id, record.status])).toEqual([[a.id, 'active']])
    await fresh.append(alice, { kind: 'semantic', content: 'c' }, { audit })
    expect(readFileSync(file, 'utf8').startsWith(before)).toBe(true)
    expect(await verifyLog(fsWorkspace(dir), 'memory:memory.jsonl')).toEqual({ ok: true, lines: 2 })
  })

  it('a tampered middle line makes operations throw MEMORY_LOG_CORRUPT with its line number', async () => {
    const { dir, adapter, file, reopen } = setup()
    for (const content of ['one', 'two', 'three']) await adapter.append(alice, { kind: 'semantic', content }, { audit })
    const lines = readFileSync(file, 'utf8').split('\n')
    lines[1] = lines[1]!.replace('"two"', '"TWO"')
    writeFileSync(file, lines.join('\n'))
    const expected = { code: 'MEMORY_LOG_CORRUPT', details: expect.objectContaining({ line: 2, reason: expect.stringContaining('digest') }) }
    await expect(reopen().search(alice, { query: 'one' })).rejects.toMatchObject(expected)
    await expect(reopen().append(alice, { kind: 'semantic', content: 'four' }, { audit })).rejects.toMatchObject(expected)
    expect(await verifyLog(fsWorkspace(dir), 'memory:memory.jsonl')).toMatchObject({ ok: false, lines: 3, firstBad: { line: 2 } })
    // The tampered file is never rewritten by a failed operation.
    expect(readFileSync(file, 'utf8')).toBe(lines.join('\n'))
  })

  it('a tampered line is caught by a store that had already read the log when the size changes', async () => {
    const { adapter, file } = setup()
    for (const content of ['one', 'two', 'three']) await adapter.append(alice, { kind: 'semantic', content }, { audit })
    await adapter.export(alice)
    writeFileSync(file, readFileSync(file, 'utf8').replace('"one"', '"one more"'))
    await expect(adapter.export(alice)).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: expect.objectContaining({ line: 1 }) })
  })

  it.each([
    ['a line that is not JSON', (lines: string[]) => { lines[1] = 'garbage' }, 2, 'JSON'],
    ['a removed line (broken chain)', (lines: string[]) => { lines.splice(1, 1) }, 2, 'seq'],
    ['an empty line', (lines: string[]) => { lines.splice(1, 0, '') }, 2, 'empty'],
  ])('%s in the middle is MEMORY_LOG_CORRUPT, never skipped', async (_name, damage, line, reason) => {
    const { file, adapter, reopen } = setup()
    for (const content of ['one', 'two', 'three']) await adapter.append(alice, { kind: 'semantic', content }, { audit })
    const lines = readFileSync(file, 'utf8').split('\n')
    damage(lines)
    writeFileSync(file, lines.join('\n'))
    await expect(reopen().export(alice)).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: expect.objectContaining({ line, reason: expect.stringContaining(reason) }) })
  })

  it('a line whose digest matches but whose event cannot apply is MEMORY_LOG_CORRUPT', async () => {
    const { dir, adapter, file, reopen } = setup()
    const saved = await adapter.append(alice, { kind: 'semantic', content: 'once' }, { audit })
    await adapter.delete(alice, saved.id, { audit })
    // Forge a well-chained second tombstone for the same record.
    const last = JSON.parse(readFileSync(file, 'utf8').trim().split('\n').at(-1)!) as Record<string, unknown>
    const { digest: prevDigest, ...body } = last
    const forged: Record<string, unknown> = { ...body, seq: 3, version: 3, prev: prevDigest }
    // A version 3 header holds the payload digest (of `{}`: the line has no payload member).
    forged.digest = createHash('sha256').update(canonicalJson({ ...forged, payloadDigest: createHash('sha256').update('{}').digest('hex') })).digest('hex')
    appendFileSync(file, `${canonicalJson(forged)}\n`)
    await expect(reopen().export(alice)).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: expect.objectContaining({ line: 3, reason: expect.stringContaining('deleted twice') }) })
    expect((await verifyLog(fsWorkspace(dir), 'memory:memory.jsonl')).firstBad).toEqual({ line: 3, reason: expect.stringContaining('deleted twice') })
  })

  it('a read error is thrown, never taken for an empty log', async () => {
    const dir = tempDir()
    // A folder where the log file should be: reading it fails with EISDIR.
    mkdirSync(join(dir, 'memory', 'memory.jsonl'), { recursive: true })
    const adapter = await workspaceJsonlMemoryStore().create(context(fsWorkspace(dir)))
    await expect(adapter.export(alice)).rejects.toMatchObject({ code: 'WORKSPACE_READ_FAILED' })
    await expect(adapter.append(alice, { kind: 'semantic', content: 'x' }, { audit })).rejects.toMatchObject({ code: 'WORKSPACE_READ_FAILED' })
  })
})

describe('workspaceJsonlMemoryStore replay', () => {
  type Operation =
    | { op: 'remember'; scope: number; content: string; supersede: number[] }
    | { op: 'delete'; scope: number; pick: number }
  const scopes: MemoryTarget[] = [
    { store: 'agent', scope: { agent: 'support' } },
    { store: 'agent', scope: { agent: 'support', user: 'alice' } },
    { store: 'agent', scope: { agent: 'support', user: 'bob' } },
    { store: 'notes', scope: { agent: 'support' } },
  ]
  const operation: fc.Arbitrary<Operation> = fc.oneof(
    fc.record({ op: fc.constant('remember' as const), scope: fc.nat(3), content: fc.string({ maxLength: 12 }), supersede: fc.array(fc.nat(40), { maxLength: 2 }) }),
    fc.record({ op: fc.constant('delete' as const), scope: fc.nat(3), pick: fc.nat(40) }),
  )

  it('replaying the log from disk (new workspace object) equals the live state after any sequence of operations', async () => {
    await fc.assert(fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 25 }), async (operations) => {
      const { adapter, reopen, dir } = setup()
      const ids: string[] = []
      for (const step of operations) {
        const target = scopes[step.scope]!
        if (step.op === 'remember') {
          const supersedes = step.supersede.map(index => ids[index % Math.max(ids.length, 1)]).filter((id): id is string => id !== undefined)
          try {
            ids.push((await adapter.append(target, { kind: 'semantic', content: step.content, supersedes }, { audit })).id)
          }
          catch (error) {
            // Only an invalid supersede may fail, and then nothing is written.
            expect(error).toMatchObject({ code: 'MEMORY_SUPERSEDE_NOT_FOUND' })
          }
        }
        else {
          const id = ids[step.pick % Math.max(ids.length, 1)]
          if (id) await adapter.delete(target, id, { audit })
        }
      }
      const replayed = reopen()
      for (const target of scopes) {
        expect(await replayed.export(target)).toEqual(await adapter.export(target))
      }
      const total = (await Promise.all(scopes.map(target => adapter.export(target)))).reduce((sum, records) => sum + records.length, 0)
      expect(total).toBe(ids.length)
      expect(await verifyLog(fsWorkspace(dir), 'memory:memory.jsonl')).toMatchObject({ ok: true })
    }), { numRuns: 40 })
  })
})

describe('workspace JSONL store and the event loop', () => {
  it('an awaited loop of 5,000 appends lets interval and timeout callbacks run while it goes on', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-turns-'))
    folders.push(dir)
    const adapter = workspaceJsonlMemoryStore().create(context(createWorkspace({ dir })))
    await adapter.append(alice, { kind: 'semantic', content: 'the first note opens the log' }, { audit })
    await expectTurnsDuring(async () => {
      for (let index = 0; index < 5_000; index++) await adapter.append(alice, { kind: 'semantic', content: `note number ${index} of the burst` }, { audit })
    })
    expect(await adapter.export(alice)).toHaveLength(5_001)
  })
})

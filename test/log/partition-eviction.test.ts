/**
 * Dropping partitions (docs/log-format.md, "Dropping partitions"): with `maxLoadedScopes`, the
 * least recently used scopes that the checkpoint holds exactly leave memory after an operation
 * and come back from their section on next use, with the same records and search results; a
 * scope with lines after the checkpoint stays until a checkpoint covers it; another process's
 * writes and a checkpoint replaced meanwhile are seen after a reload.
 */
import { cpSync, existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { openMemoryLog, verifyLog, type MemoryLogWarning } from '../../src/memory/event-log.ts'
import { adapterVectors, hybridSearch } from '../../src/memory/hybrid-search.ts'
import { partitionKey } from '../../src/memory/records.ts'
import { workspaceJsonlMemoryStore, type WorkspaceJsonlMemoryStoreOptions } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryTarget } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { Workspace } from '../../src/workspace/types.ts'
import { countingEmbedder } from '../search/vectors-embedder.ts'
import { runRememberLoop } from './fixtures/run-remember-loop.ts'

const KEY = 'memory:memory.jsonl'
const USERS = ['alice', 'bob', 'chloé', 'dan']
const target = (user: string): MemoryTarget => ({ store: 'agent', scope: { agent: 'support', user } })
const audit = { via: 'api' }
const adapterOf = (workspace: Workspace, options: WorkspaceJsonlMemoryStoreOptions) => workspaceJsonlMemoryStore(options).create({ store: 'agent', agent: 'support', workspace, writable: true })

/** A log of three records per user and its checkpoint; returns its folder. */
async function logWithCheckpoint(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'vam-evict-'))
  const adapter = adapterOf(createWorkspace({ dir }), { checkpointEvery: false })
  for (const user of USERS) {
    for (const content of [`${user} likes tea`, `${user} runs daily`, `${user} owns a cat`]) await adapter.append(target(user), { kind: 'semantic', content }, { audit })
  }
  expect(await openMemoryLog(createWorkspace({ dir }), KEY).checkpoint()).toBe(true)
  return dir
}

/** A store over `dir` that keeps at most `max` scopes loaded, with its warnings. */
function bounded(dir: string, max: number) {
  const warnings: MemoryLogWarning[] = []
  const workspace = createWorkspace({ dir })
  // The log's options apply when it is first opened: open it here with the warning sink.
  openMemoryLog(workspace, KEY, { maxLoadedPartitions: max, onWarning: warning => warnings.push(warning) })
  const adapter = adapterOf(workspace, { maxLoadedScopes: max })
  return { adapter, warnings, loaded: () => adapter.log.loadedPartitions!() }
}

describe('dropping partitions from memory', () => {
  it('an evicted scope reloads with deep-equal records and the same search results', async () => {
    const dir = await logWithCheckpoint()
    const { adapter, loaded, warnings } = bounded(dir, 1)
    const before = await adapter.export(target('alice'))
    const hitsBefore = await adapter.search(target('alice'), { query: 'tea cat' })
    expect(loaded()).toBe(1)
    await adapter.export(target('bob'))
    // alice was the least recently used and clean: dropped.
    expect(loaded()).toBe(1)
    expect(await adapter.log.view(state => state.partitions.has(adapterPartition('alice')), { partitions: [] })).toBe(false)
    expect(await adapter.export(target('alice'))).toEqual(before)
    expect(await adapter.search(target('alice'), { query: 'tea cat' })).toEqual(hitsBefore)
    expect(hitsBefore.map(hit => hit.record.content)).toContain('alice likes tea')
    expect(loaded()).toBe(1)
    expect(warnings).toEqual([])
  })

  it('a write to an evicted scope keeps the chain and its record is found', async () => {
    const dir = await logWithCheckpoint()
    const { adapter, loaded } = bounded(dir, 1)
    await adapter.export(target('alice'))
    await adapter.export(target('bob'))
    const record = await adapter.append(target('alice'), { kind: 'semantic', content: 'alice plays chess' }, { audit })
    expect((await verifyLog(createWorkspace({ dir }), KEY)).ok).toBe(true)
    expect(await adapter.read(target('alice'), record.id)).toEqual(record)
    expect((await adapter.search(target('alice'), { query: 'chess' })).map(hit => hit.record.id)).toEqual([record.id])
    expect((await adapter.export(target('alice'))).map(item => item.content)).toEqual(['alice likes tea', 'alice runs daily', 'alice owns a cat', 'alice plays chess'])
    expect(loaded()).toBe(1)
  })

  it('a scope with lines after the checkpoint is not evicted until the next checkpoint', async () => {
    const dir = await logWithCheckpoint()
    const { adapter, loaded } = bounded(dir, 2)
    const keys = () => adapter.log.view(state => [...state.partitions.keys()].sort(), { partitions: [] })
    await adapter.append(target('alice'), { kind: 'semantic', content: 'alice plays chess' }, { audit })
    await adapter.export(target('bob'))
    await adapter.export(target('chloé'))
    // alice, the least recently used, holds a line the checkpoint does not: kept; bob (clean) made room.
    expect(await keys()).toEqual([adapterPartition('alice'), adapterPartition('chloé')].sort())
    expect(await adapter.log.checkpoint()).toBe(true)
    await adapter.export(target('dan'))
    // The checkpoint holds alice's line now: alice is clean and goes first.
    expect(await keys()).toEqual([adapterPartition('chloé'), adapterPartition('dan')].sort())
    expect(loaded()).toBe(2)
    expect((await adapter.export(target('alice'))).map(item => item.content)).toEqual(['alice likes tea', 'alice runs daily', 'alice owns a cat', 'alice plays chess'])
  })

  it('the idle turn that takes a write into a built index is no use of the scope: the bound drops scopes in the order operations used them', async () => {
    const dir = await logWithCheckpoint()
    const { adapter } = bounded(dir, 2)
    const keys = () => adapter.log.view(state => [...state.partitions.keys()].sort(), { partitions: [] })
    expect(await adapter.search(target('alice'), { query: 'tea' })).toHaveLength(1)
    await adapter.append(target('alice'), { kind: 'semantic', content: 'alice plays chess' }, { audit })
    await adapter.export(target('bob'))
    expect(await adapter.log.checkpoint()).toBe(true)
    // The index update of alice's write runs on this idle turn.
    await new Promise(resolve => setImmediate(resolve))
    await adapter.export(target('chloé'))
    // alice was used before bob, so alice makes room.
    expect(await keys()).toEqual([adapterPartition('bob'), adapterPartition('chloé')].sort())
    expect((await adapter.search(target('alice'), { query: 'chess' })).map(hit => hit.record.content)).toEqual(['alice plays chess'])
  })

  it('a second process writing meanwhile, and a checkpoint replaced meanwhile, are seen after a reload', async () => {
    const dir = await logWithCheckpoint()
    const { adapter, loaded, warnings } = bounded(dir, 1)
    await adapter.export(target('alice'))
    await adapter.export(target('bob'))
    await runRememberLoop(dir, 'child', 20)
    // Another open writes a newer checkpoint: the directory this process read is stale.
    expect(await openMemoryLog(createWorkspace({ dir }), KEY).checkpoint()).toBe(true)
    const alice = await adapter.export(target('alice'))
    expect(alice.map(item => item.content)).toEqual(['alice likes tea', 'alice runs daily', 'alice owns a cat', ...Array.from({ length: 20 }, (_, n) => `child ${n}`)])
    expect(await adapter.export(target('bob'))).toEqual(await adapterOf(createWorkspace({ dir }), {}).export(target('bob')))
    expect(loaded()).toBe(1)
    expect(warnings).toEqual([])
  })

  it('random operations with eviction after each give the state of a store that never evicts', async () => {
    const op = fc.record({ user: fc.constantFrom(...USERS), kind: fc.constantFrom('remember', 'delete', 'export', 'search', 'checkpoint'), word: fc.constantFrom('tea', 'cat', 'chess', 'rain') })
    await fc.assert(fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
      const dir = await logWithCheckpoint()
      const small = bounded(dir, 1).adapter
      const copy = mkdtempSync(join(tmpdir(), 'vam-evict-ref-'))
      cpSync(dir, copy, { recursive: true })
      const whole = adapterOf(createWorkspace({ dir: copy }), { maxLoadedScopes: false })
      const ids = new Map<string, [string, string]>()
      for (const { user, kind, word } of ops) {
        if (kind === 'remember') {
          const a = await small.append(target(user), { kind: 'semantic', content: `${user} ${word}` }, { audit })
          const b = await whole.append(target(user), { kind: 'semantic', content: `${user} ${word}` }, { audit })
          ids.set(a.content, [a.id, b.id])
        }
        else if (kind === 'delete') {
          const pair = ids.get(`${user} ${word}`)
          if (pair) {
            expect((await small.delete(target(user), pair[0], { audit }))?.status).toBe((await whole.delete(target(user), pair[1], { audit }))?.status)
          }
        }
        else if (kind === 'checkpoint') await small.log.checkpoint()
        else if (kind === 'search') {
          const strip = (hits: Awaited<ReturnType<typeof small.search>>) => hits.map(hit => [hit.record.content, hit.record.status])
          expect(strip(await small.search(target(user), { query: word }))).toEqual(strip(await whole.search(target(user), { query: word })))
        }
        const view = async (adapter: typeof small) => (await adapter.export(target(user))).map(record => [record.content, record.status, record.version])
        expect(await view(small)).toEqual(await view(whole))
        expect(small.log.loadedPartitions!()).toBeLessThanOrEqual(USERS.length)
      }
      expect((await verifyLog(createWorkspace({ dir }), KEY)).ok).toBe(true)
    }), { numRuns: 15 })
  })

  it('searches of scopes never written keep no index and no partition in memory', async () => {
    const dir = await logWithCheckpoint()
    const { adapter, loaded } = bounded(dir, 2)
    for (let n = 0; n < 20; n++) expect(await adapter.search(target(`nobody ${n}`), { query: 'tea' })).toEqual([])
    expect(await adapter.log.view(state => ({ indexes: state.indexes.size, partitions: state.partitions.size }), { partitions: [] })).toEqual({ indexes: 0, partitions: 0 })
    expect(loaded()).toBe(0)
  })

  it('after a full replay of more scopes than the bound, one checkpoint is written and the least recently used scopes are dropped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-evict-'))
    const writer = adapterOf(createWorkspace({ dir }), { checkpointEvery: false })
    for (const user of USERS) await writer.append(target(user), { kind: 'semantic', content: `${user} likes tea` }, { audit })
    const { adapter, loaded, warnings } = bounded(dir, 2)
    // No checkpoint: the open replays every line, so every scope is loaded and none can be dropped yet.
    expect((await adapter.export(target('alice'))).map(record => record.content)).toEqual(['alice likes tea'])
    await adapter.log.settled()
    expect(existsSync(join(dir, 'memory/memory.jsonl.checkpoint'))).toBe(true)
    expect(loaded()).toBe(2)
    expect(await adapter.log.view(state => state.partitions.has(adapterPartition('alice')), { partitions: [] })).toBe(true)
    for (const user of USERS) expect((await adapter.export(target(user))).map(record => record.content)).toEqual([`${user} likes tea`])
    expect(loaded()).toBe(2)
    expect(warnings).toEqual([])
  })

  it('without checkpoints the bound cannot hold after a full replay: every scope stays loaded', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-evict-'))
    const writer = adapterOf(createWorkspace({ dir }), { checkpointEvery: false })
    for (const user of USERS) await writer.append(target(user), { kind: 'semantic', content: `${user} likes tea` }, { audit })
    const adapter = adapterOf(createWorkspace({ dir }), { maxLoadedScopes: 2, checkpointEvery: false })
    await adapter.export(target('alice'))
    await adapter.log.settled()
    // A dropped scope could only come back by replaying the log: nothing is dropped.
    expect(adapter.log.loadedPartitions!()).toBe(USERS.length)
    expect(existsSync(join(dir, 'memory/memory.jsonl.checkpoint'))).toBe(false)
  })

  it('a scope dropped from memory drops its vector index and its raw vectors; its next hybrid search reads them again by id, embedding nothing', async () => {
    const dir = await logWithCheckpoint()
    const { adapter, loaded } = bounded(dir, 1)
    const model = countingEmbedder()
    const vectors = adapterVectors(adapter, model)
    const before = await hybridSearch(adapter, target('alice'), { query: 'tea' }, { model })
    expect(vectors.indexedPartitions()).toBe(1)
    expect(vectors.heldVectors()).toBe(3)
    const embedded = vectors.stats.embeddedRecords
    await adapter.export(target('bob'))
    // alice (clean, least recently used) left the log's memory, and its vector index and vectors with it.
    expect(loaded()).toBe(1)
    expect(vectors.indexedPartitions()).toBe(0)
    expect(vectors.heldVectors()).toBe(0)
    expect(await hybridSearch(adapter, target('alice'), { query: 'tea' }, { model })).toEqual(before)
    expect(vectors.indexedPartitions()).toBe(1)
    expect(vectors.stats.embeddedRecords).toBe(embedded)
    // Every scope searched in turn: only the loaded scope's vectors stay held.
    for (const user of USERS) await hybridSearch(adapter, target(user), { query: 'cat' }, { model })
    expect(loaded()).toBe(1)
    expect(vectors.heldVectors()).toBe(3)
    expect(vectors.stats.embeddedRecords).toBe(embedded + 9)
  })

  it('refuses a maxLoadedScopes that is not a whole number from 1 or false', () => {
    for (const bad of [0, 1.5, -1, '10', true]) {
      expect(() => workspaceJsonlMemoryStore({ maxLoadedScopes: bad as never })).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_OPTIONS_INVALID' }))
    }
    expect(() => workspaceJsonlMemoryStore({ maxLoadedScopes: false })).not.toThrow()
  })
})

function adapterPartition(user: string): string {
  return partitionKey('agent', target(user).scope)
}

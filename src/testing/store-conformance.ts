/**
 * The shared conformance suite for memory store adapters: the same assertions run against every
 * adapter (and every unstorage driver the JSONL store supports), as unstorage does for its drivers.
 *
 * Source: capability document, "A custom adapter implements `search`, `read`, `append`,
 * `delete`, and `export`", plus the contract written on {@link MemoryStoreAdapter}. One
 * shared suite (`testMemoryStore()` in `./testing`) holds every store to the same contract. It
 * takes the test framework's functions as an argument, so `vite-agent-memory/testing` imports no test framework.
 */
import type { MemoryAudit, MemoryRecordInput, MemoryStoreAdapter, MemoryTarget } from '../memory/types.ts'

/** The matchers of a Jest-compatible `expect` that the conformance suite uses (vitest's and Jest's fit). */
export interface ConformanceMatchers {
  toBe(expected: unknown): void
  toEqual(expected: unknown): void
  toMatchObject(expected: object): void
  toMatch(expected: RegExp | string): void
  toBeUndefined(): void
  toBeDefined(): void
  toBeGreaterThan(expected: number): void
  toHaveLength(expected: number): void
  rejects: { toMatchObject(expected: object): Promise<void> }
}

/** The test framework functions {@link testMemoryStore} registers its tests with: pass vitest's (or Jest's) `describe`, `it` and `expect`. */
export interface ConformanceTestApi {
  describe(name: string, body: () => void): void
  it(name: string, body: () => Promise<void>): void
  expect(actual: unknown): ConformanceMatchers
}

/**
 * Registers a `describe(name)` block of conformance tests (30 tests: append/read fields, search
 * rules, scope isolation, supersede, delete, export, invalid input). `makeAdapter` is called once
 * per test and must return an adapter with no records (a fresh store). `test` is the framework's
 * `{ describe, it, expect }`.
 *
 * @example
 * import { describe, expect, it } from 'vitest'
 * import { testMemoryStore } from 'vite-agent-memory/testing'
 * testMemoryStore('my store', () => myStore().create(context), { describe, it, expect })
 */
export function testMemoryStore(name: string, makeAdapter: () => MemoryStoreAdapter | Promise<MemoryStoreAdapter>, test: ConformanceTestApi): void {
  const { describe, it, expect } = test
  const audit: MemoryAudit = { via: 'api', agent: 'support', runId: 'run_1', threadId: 'thread_1' }
  const agentOnly: MemoryTarget = { store: 'agent', scope: { agent: 'support' } }
  const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
  const bob: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'bob' } }
  const remember = (adapter: MemoryStoreAdapter, target: MemoryTarget, input: Partial<MemoryRecordInput> & { content: string }) =>
    adapter.append(target, { kind: 'semantic', ...input }, { audit })

  describe(name, () => {
    it('append then read returns the record with its fields, an id, version 1 and status active', async () => {
      const adapter = await makeAdapter()
      const saved = await remember(adapter, alice, {
        content: 'Alice prefers green tea',
        title: 'Tea',
        kind: 'profile',
        tags: ['drinks'],
        metadata: { source: 'chat', nested: { n: 1 } },
        pinned: true,
        confidence: 0.8,
        provenance: { runId: 'run_1', threadId: 'thread_1', source: 'tool', toolName: 'memory_remember' },
      })
      expect(saved.id).toMatch(/^mem_[0-9a-f]{32}$/)
      expect(saved).toMatchObject({
        store: 'agent',
        scope: { agent: 'support', user: 'alice' },
        kind: 'profile',
        content: 'Alice prefers green tea',
        title: 'Tea',
        tags: ['drinks'],
        metadata: { source: 'chat', nested: { n: 1 } },
        pinned: true,
        confidence: 0.8,
        supersedes: [],
        provenance: { runId: 'run_1', threadId: 'thread_1', source: 'tool', toolName: 'memory_remember' },
        audit,
        version: 1,
        status: 'active',
      })
      expect(Number.isNaN(Date.parse(saved.createdAt))).toBe(false)
      expect(saved.updatedAt).toBe(saved.createdAt)
      expect(await adapter.read(alice, saved.id)).toEqual(saved)
    })

    it('append fills defaults: no tags, empty metadata, not pinned, empty provenance', async () => {
      const adapter = await makeAdapter()
      const saved = await remember(adapter, alice, { content: 'plain' })
      expect(saved).toMatchObject({ tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {} })
      expect(saved.title).toBeUndefined()
      expect(saved.confidence).toBeUndefined()
    })

    it('append keeps every optional field given: episode, keywords, topics, rawExtract, recallTriggers, occurredAt', async () => {
      const adapter = await makeAdapter()
      const fields = {
        episode: { observation: 'asked for a refund', result: 'refunded' },
        keywords: ['refund'],
        topics: ['billing'],
        rawExtract: 'I want my money back',
        recallTriggers: ['refund policy'],
        occurredAt: '2024-03-02',
      }
      const saved = await remember(adapter, alice, { content: 'Alice was refunded', kind: 'episodic', ...fields })
      expect(saved).toMatchObject(fields)
      expect(await adapter.read(alice, saved.id)).toMatchObject(fields)
    })

    it('append keeps a given createdAt (imports keep the original time)', async () => {
      const adapter = await makeAdapter()
      const saved = await remember(adapter, alice, { content: 'old fact', createdAt: '2023-05-07T13:00:00.000Z' })
      expect(saved.createdAt).toBe('2023-05-07T13:00:00.000Z')
      expect((await adapter.read(alice, saved.id))?.createdAt).toBe('2023-05-07T13:00:00.000Z')
    })

    it('read of an unknown id returns undefined', async () => {
      const adapter = await makeAdapter()
      await remember(adapter, alice, { content: 'something' })
      expect(await adapter.read(alice, 'mem_00000000000000000000000000000000')).toBeUndefined()
    })

    it('records returned are copies: changing one does not change the store', async () => {
      const adapter = await makeAdapter()
      const saved = await remember(adapter, alice, { content: 'original', tags: ['a'] })
      saved.content = 'changed'
      saved.tags.push('b')
      const again = await adapter.read(alice, saved.id)
      expect(again?.content).toBe('original')
      expect(again?.tags).toEqual(['a'])
    })

    // Scores are the search index's business (it ranks them): only which records match and their order are contract.
    it('search matches the query case-insensitively in the title, content and tags', async () => {
      const adapter = await makeAdapter()
      const saved = await remember(adapter, alice, { title: 'Coffee order', content: 'COFFEE with milk; coffee at 9', tags: ['coffee', 'Coffee-time', 'tea'] })
      const byTag = await remember(adapter, alice, { content: 'tea only', tags: ['Coffee'] })
      await remember(adapter, alice, { content: 'water only' })
      const hits = await adapter.search(alice, { query: 'cOfFeE' })
      expect(hits.map(hit => hit.record.id)).toEqual([saved.id, byTag.id])
      expect(hits.every(hit => hit.score > 0)).toBe(true)
    })

    it('search in substring mode reads only the title, content and tags: the weekday, day, month and year of a record\'s dates match nothing', async () => {
      const adapter = await makeAdapter()
      const plain = await remember(adapter, alice, { content: 'hello world', createdAt: '2023-05-09T10:00:00.000Z' })
      await remember(adapter, alice, { content: 'the trip', occurredAt: '2023-06-03' })
      for (const query of ['tues', 'Tuesday', 'may', 'June', 'saturday', '2023', 'day', '9']) expect(await adapter.search(alice, { query, mode: 'substring' })).toEqual([])
      expect((await adapter.search(alice, { query: 'hello', mode: 'substring' })).map(hit => hit.record.id)).toEqual([plain.id])
    })

    it('search leaves out records without a match', async () => {
      const adapter = await makeAdapter()
      await remember(adapter, alice, { content: 'apples' })
      expect(await adapter.search(alice, { query: 'pears' })).toEqual([])
    })

    it('search returns 10 results by default', async () => {
      const adapter = await makeAdapter()
      for (let index = 0; index < 15; index++) await remember(adapter, alice, { content: `note ${index} about cats` })
      expect(await adapter.search(alice, { query: 'cats' })).toHaveLength(10)
      expect(await adapter.search(alice, { query: 'cats', limit: 12 })).toHaveLength(12)
      expect(await adapter.search(alice, { query: 'cats', limit: 3 })).toHaveLength(3)
    })

    it('search orders by score, then newest first', async () => {
      const adapter = await makeAdapter()
      const once = await remember(adapter, alice, { content: 'dog', createdAt: '2024-01-01T00:00:00.000Z' })
      const thrice = await remember(adapter, alice, { content: 'dog dog dog', createdAt: '2023-01-01T00:00:00.000Z' })
      const onceNewer = await remember(adapter, alice, { content: 'a dog', createdAt: '2024-06-01T00:00:00.000Z' })
      const hits = await adapter.search(alice, { query: 'dog' })
      expect(hits.map(hit => hit.record.id)).toEqual([thrice.id, onceNewer.id, once.id])
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score)
    })

    it('search filters by kinds before the limit', async () => {
      const adapter = await makeAdapter()
      for (let index = 0; index < 12; index++) await remember(adapter, alice, { content: 'bird bird bird', kind: 'semantic' })
      const profiles = [
        await remember(adapter, alice, { content: 'bird', kind: 'profile' }),
        await remember(adapter, alice, { content: 'bird', kind: 'profile' }),
      ]
      const hits = await adapter.search(alice, { query: 'bird', kinds: ['profile'] })
      expect(hits.map(hit => hit.record.id).sort()).toEqual(profiles.map(record => record.id).sort())
      expect(await adapter.search(alice, { query: 'bird', kinds: [] })).toEqual([])
    })

    it('search filters by tags, requiring every listed tag, before the limit', async () => {
      const adapter = await makeAdapter()
      for (let index = 0; index < 12; index++) await remember(adapter, alice, { content: 'fish fish', tags: ['food'] })
      const both = await remember(adapter, alice, { content: 'fish', tags: ['Food', 'pets'] })
      await remember(adapter, alice, { content: 'fish', tags: ['pets'] })
      const hits = await adapter.search(alice, { query: 'fish', tags: ['food', 'PETS'] })
      expect(hits.map(hit => hit.record.id)).toEqual([both.id])
    })

    it('search filters by after and before as instants, before the limit', async () => {
      const adapter = await makeAdapter()
      for (let index = 0; index < 12; index++) await remember(adapter, alice, { content: 'trip trip', createdAt: '2024-03-01T00:00:00.000Z' })
      // 22:30Z on Dec 31 is after 00:00+02:00 on Jan 1 (22:00Z), though it sorts before it as text.
      const inside = await remember(adapter, alice, { content: 'trip', createdAt: '2023-12-31T22:30:00.000Z' })
      await remember(adapter, alice, { content: 'trip', createdAt: '2023-12-31T21:00:00.000Z' })
      const hits = await adapter.search(alice, { query: 'trip', after: '2024-01-01T00:00:00+02:00', before: '2024-02-01T00:00:00Z' })
      expect(hits.map(hit => hit.record.id)).toEqual([inside.id])
      const atBoundary = await adapter.search(alice, { query: 'trip', after: '2023-12-31T22:30:00.000Z', before: '2024-03-01T00:00:00.000Z' })
      expect(atBoundary.map(hit => hit.record.id)).toEqual([inside.id])
    })

    it('search rejects an empty query, an invalid date and a limit below 1', async () => {
      const adapter = await makeAdapter()
      await remember(adapter, alice, { content: 'anything' })
      await expect(adapter.search(alice, { query: '  ' })).rejects.toMatchObject({ code: 'MEMORY_QUERY_INVALID' })
      await expect(adapter.search(alice, { query: 'anything', after: 'last tuesday' })).rejects.toMatchObject({ code: 'MEMORY_QUERY_INVALID' })
      await expect(adapter.search(alice, { query: 'anything', limit: 0 })).rejects.toMatchObject({ code: 'MEMORY_QUERY_INVALID' })
    })

    it('a store scoped { agent } never sees records of { agent, user }, and the reverse', async () => {
      const adapter = await makeAdapter()
      const shared = await remember(adapter, agentOnly, { content: 'secret plan' })
      const personal = await remember(adapter, alice, { content: 'secret diary' })
      expect((await adapter.search(agentOnly, { query: 'secret' })).map(hit => hit.record.id)).toEqual([shared.id])
      expect((await adapter.search(alice, { query: 'secret' })).map(hit => hit.record.id)).toEqual([personal.id])
      expect(await adapter.read(agentOnly, personal.id)).toBeUndefined()
      expect(await adapter.read(alice, shared.id)).toBeUndefined()
      expect((await adapter.export(agentOnly)).map(record => record.id)).toEqual([shared.id])
      expect((await adapter.export(alice)).map(record => record.id)).toEqual([personal.id])
    })

    it('two users never see each other\'s records', async () => {
      const adapter = await makeAdapter()
      const fromAlice = await remember(adapter, alice, { content: 'my password hint is blue' })
      const fromBob = await remember(adapter, bob, { content: 'my password hint is red' })
      expect((await adapter.search(alice, { query: 'password' })).map(hit => hit.record.id)).toEqual([fromAlice.id])
      expect((await adapter.search(bob, { query: 'password' })).map(hit => hit.record.id)).toEqual([fromBob.id])
      expect(await adapter.read(bob, fromAlice.id)).toBeUndefined()
      expect((await adapter.export(bob)).map(record => record.id)).toEqual([fromBob.id])
    })

    it('two stores with the same scope never see each other\'s records', async () => {
      const adapter = await makeAdapter()
      const other: MemoryTarget = { store: 'notes', scope: alice.scope }
      const mine = await remember(adapter, alice, { content: 'shared words' })
      const theirs = await remember(adapter, other, { content: 'shared words' })
      expect((await adapter.search(alice, { query: 'shared' })).map(hit => hit.record.id)).toEqual([mine.id])
      expect(await adapter.read(alice, theirs.id)).toBeUndefined()
      expect(await adapter.delete(alice, theirs.id, { audit })).toBeUndefined()
    })

    it('every operation rejects a scope without a non-empty field', async () => {
      const adapter = await makeAdapter()
      const empty: MemoryTarget = { store: 'agent', scope: {} }
      await expect(adapter.search(empty, { query: 'x' })).rejects.toMatchObject({ code: 'MEMORY_SCOPE_REQUIRED' })
      await expect(adapter.read(empty, 'mem_1')).rejects.toMatchObject({ code: 'MEMORY_SCOPE_REQUIRED' })
      await expect(remember(adapter, empty, { content: 'x' })).rejects.toMatchObject({ code: 'MEMORY_SCOPE_REQUIRED' })
      await expect(adapter.delete(empty, 'mem_1', { audit })).rejects.toMatchObject({ code: 'MEMORY_SCOPE_REQUIRED' })
      await expect(adapter.export(empty)).rejects.toMatchObject({ code: 'MEMORY_SCOPE_REQUIRED' })
    })

    it('supersedes marks the listed records superseded and search no longer returns them', async () => {
      const adapter = await makeAdapter()
      const old = await remember(adapter, alice, { content: 'lives in Paris' })
      const current = await remember(adapter, alice, { content: 'lives in Lyon', supersedes: [old.id] })
      expect(current.supersedes).toEqual([old.id])
      const superseded = await adapter.read(alice, old.id)
      expect(superseded).toMatchObject({ status: 'superseded', supersededBy: current.id, version: 2, content: 'lives in Paris' })
      expect((await adapter.search(alice, { query: 'lives in' })).map(hit => hit.record.id)).toEqual([current.id])
    })

    it('supersedes with an unknown id throws MEMORY_SUPERSEDE_NOT_FOUND and writes nothing', async () => {
      const adapter = await makeAdapter()
      const old = await remember(adapter, alice, { content: 'fact one' })
      await expect(remember(adapter, alice, { content: 'fact two', supersedes: [old.id, 'mem_unknown'] })).rejects.toMatchObject({ code: 'MEMORY_SUPERSEDE_NOT_FOUND' })
      expect((await adapter.export(alice)).map(record => [record.id, record.status])).toEqual([[old.id, 'active']])
    })

    it('supersedes with another scope\'s id throws MEMORY_SUPERSEDE_NOT_FOUND and leaves that record active', async () => {
      const adapter = await makeAdapter()
      const bobs = await remember(adapter, bob, { content: 'bob fact' })
      await expect(remember(adapter, alice, { content: 'alice fact', supersedes: [bobs.id] })).rejects.toMatchObject({ code: 'MEMORY_SUPERSEDE_NOT_FOUND' })
      expect(await adapter.export(alice)).toEqual([])
      expect((await adapter.read(bob, bobs.id))?.status).toBe('active')
    })

    it('supersedes with a record that is already superseded or deleted throws MEMORY_SUPERSEDE_NOT_FOUND', async () => {
      const adapter = await makeAdapter()
      const first = await remember(adapter, alice, { content: 'v1' })
      await remember(adapter, alice, { content: 'v2', supersedes: [first.id] })
      await expect(remember(adapter, alice, { content: 'v3', supersedes: [first.id] })).rejects.toMatchObject({ code: 'MEMORY_SUPERSEDE_NOT_FOUND' })
      const gone = await remember(adapter, alice, { content: 'gone' })
      await adapter.delete(alice, gone.id, { audit })
      await expect(remember(adapter, alice, { content: 'v4', supersedes: [gone.id] })).rejects.toMatchObject({ code: 'MEMORY_SUPERSEDE_NOT_FOUND' })
      expect(await adapter.export(alice)).toHaveLength(3)
    })

    it('delete is soft: the record is kept with status deleted and search no longer returns it', async () => {
      const adapter = await makeAdapter()
      const saved = await remember(adapter, alice, { content: 'phone number 555' })
      const deleted = await adapter.delete(alice, saved.id, { audit, reason: 'user asked' })
      expect(deleted).toMatchObject({ id: saved.id, status: 'deleted', deleteReason: 'user asked', version: 2, content: 'phone number 555' })
      expect(Number.isNaN(Date.parse(deleted!.deletedAt!))).toBe(false)
      expect(deleted!.updatedAt).toBe(deleted!.deletedAt)
      expect(await adapter.read(alice, saved.id)).toEqual(deleted)
      expect(await adapter.search(alice, { query: 'phone' })).toEqual([])
      expect((await adapter.export(alice)).map(record => record.status)).toEqual(['deleted'])
    })

    it('delete of a superseded record marks it deleted', async () => {
      const adapter = await makeAdapter()
      const old = await remember(adapter, alice, { content: 'old' })
      const current = await remember(adapter, alice, { content: 'new', supersedes: [old.id] })
      const deleted = await adapter.delete(alice, old.id, { audit })
      expect(deleted).toMatchObject({ status: 'deleted', supersededBy: current.id, version: 3 })
    })

    it('delete of another scope\'s id returns undefined and leaves the record', async () => {
      const adapter = await makeAdapter()
      const bobs = await remember(adapter, bob, { content: 'bob only' })
      expect(await adapter.delete(alice, bobs.id, { audit })).toBeUndefined()
      expect(await adapter.delete(agentOnly, bobs.id, { audit })).toBeUndefined()
      expect((await adapter.read(bob, bobs.id))?.status).toBe('active')
    })

    it('delete of an unknown or already deleted id returns undefined', async () => {
      const adapter = await makeAdapter()
      expect(await adapter.delete(alice, 'mem_unknown', { audit })).toBeUndefined()
      const saved = await remember(adapter, alice, { content: 'once' })
      expect(await adapter.delete(alice, saved.id, { audit })).toBeDefined()
      expect(await adapter.delete(alice, saved.id, { audit })).toBeUndefined()
      expect((await adapter.read(alice, saved.id))?.version).toBe(2)
    })

    it('export returns every record of the scope in creation order, in any status', async () => {
      const adapter = await makeAdapter()
      const first = await remember(adapter, alice, { content: 'first', createdAt: '2030-01-01T00:00:00.000Z' })
      await remember(adapter, bob, { content: 'not mine' })
      const second = await remember(adapter, alice, { content: 'second', createdAt: '2020-01-01T00:00:00.000Z' })
      const third = await remember(adapter, alice, { content: 'third', supersedes: [second.id] })
      await adapter.delete(alice, first.id, { audit })
      const exported = await adapter.export(alice)
      expect(exported.map(record => [record.id, record.status])).toEqual([
        [first.id, 'deleted'],
        [second.id, 'superseded'],
        [third.id, 'active'],
      ])
    })

    it('changes (when the adapter offers it) tells a cursor each write, supersede and delete of its scope, and nothing of another scope', async () => {
      const adapter = await makeAdapter()
      if (!adapter.changes) return
      const kept = await remember(adapter, alice, { content: 'kept' })
      const first = await adapter.changes(alice)
      expect(first.reset).toBe(true)
      expect(first.records.map(record => record.id)).toEqual([kept.id])
      const quiet = await adapter.changes(alice, first.cursor)
      expect([quiet.reset, quiet.records.length, quiet.removed.length]).toEqual([false, 0, 0])
      const old = await remember(adapter, alice, { content: 'old' })
      await remember(adapter, bob, { content: 'not mine' })
      const added = await adapter.changes(alice, quiet.cursor)
      expect([added.reset, added.records.map(record => [record.id, record.status])]).toEqual([false, [[old.id, 'active']]])
      const replacing = await remember(adapter, alice, { content: 'new', supersedes: [old.id] })
      await adapter.delete(alice, kept.id, { audit })
      const changed = await adapter.changes(alice, added.cursor)
      expect(changed.reset).toBe(false)
      expect(new Map(changed.records.map(record => [record.id, record.status]))).toEqual(new Map([[old.id, 'superseded'], [replacing.id, 'active'], [kept.id, 'deleted']]))
      expect(changed.removed).toEqual([])
    })

    it('50 parallel appends into one scope give 50 records', async () => {
      const adapter = await makeAdapter()
      const saved = await Promise.all(Array.from({ length: 50 }, (_, index) => remember(adapter, alice, { content: `parallel ${index}` })))
      const exported = await adapter.export(alice)
      expect(exported).toHaveLength(50)
      expect(new Set(exported.map(record => record.id))).toEqual(new Set(saved.map(record => record.id)))
    })
  })
}

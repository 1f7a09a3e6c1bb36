/**
 * The date words of a record (weekday, day, month, year of `occurredAt`, else `createdAt`): ranked
 * in the `dates` field of every built-in store, never read by the substring rule (the conformance
 * suite holds every store to that), never in a hit's content or snippet.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, describe, expect, it } from 'vitest'
import { postgresMemoryStore, sqliteMemoryStore } from '../../src/capabilities/index.ts'
import { searchableContent, searchableTags } from '../../src/memory/kinds.ts'
import { createSearchIndex } from '../../src/memory/search-index.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryRecord, MemoryStoreAdapter, MemoryTarget } from '../../src/memory/types.ts'
import { createSearchIndex as createEngineIndex } from '../../src/search/search.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { postgresTestDatabases } from '../helpers/postgres.ts'

const alice: MemoryTarget = { store: 'agent', scope: { user: 'alice' } }
const context = { store: 'agent', agent: 'support', writable: true }
const folders: string[] = []
const closers: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const close of closers) await close()
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})
const databases = await postgresTestDatabases('vam_dates')

const stores: Array<[string, () => Promise<MemoryStoreAdapter>]> = [
  ['inMemoryMemoryStore', async () => inMemoryMemoryStore().create(context)],
  ['workspaceJsonlMemoryStore', async () => workspaceJsonlMemoryStore().create({ ...context, workspace: createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }) })],
  ['sqliteMemoryStore', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'vam-dates-'))
    folders.push(folder)
    const factory = sqliteMemoryStore({ file: join(folder, 'memory.db') })
    closers.push(() => factory.close())
    return factory.create()
  }],
  ...(databases.reachable
    ? [['postgresMemoryStore', async () => {
        const factory = postgresMemoryStore({ connectionString: await databases.fresh() })
        databases.onClose(() => factory.close())
        return factory.create()
      }] as [string, () => Promise<MemoryStoreAdapter>]]
    : []),
]

/** A record written in May 2023 (no event time), one that happened in May 2023 (written later), and one of neither. */
async function mayScope(adapter: MemoryStoreAdapter) {
  const audit = { via: 'import' as const }
  const written = await adapter.append(alice, { kind: 'semantic', content: 'hello world', createdAt: '2023-05-08T10:00:00.000Z' }, { audit })
  const happened = await adapter.append(alice, { kind: 'episodic', content: 'the trip to Lyon', occurredAt: '2023-05-20', createdAt: '2024-01-10T10:00:00.000Z' }, { audit })
  await adapter.append(alice, { kind: 'semantic', content: 'coffee at nine', createdAt: '2024-02-02T10:00:00.000Z' }, { audit })
  return { written, happened }
}

describe.each(stores)('date words in %s', (_name, makeAdapter) => {
  it('ranked search with "May 2023" finds the record created then and the one occurring then, their content and snippet without date words', async () => {
    const adapter = await makeAdapter()
    const { written, happened } = await mayScope(adapter)
    const hits = await adapter.search(alice, { query: 'May 2023' })
    expect(hits.map(hit => hit.record.id).sort()).toEqual([written.id, happened.id].sort())
    expect(hits.map(hit => [hit.record.content, hit.snippet]).sort()).toEqual([['hello world', 'hello world'], ['the trip to Lyon', 'the trip to Lyon']])
  })
})

describe('the dateWords ranking option', () => {
  const records: MemoryRecord[] = [
    { content: 'hello world', createdAt: '2023-05-08T10:00:00.000Z' },
    { content: 'the trip to Lyon in May', occurredAt: '2023-05-20', createdAt: '2024-01-10T10:00:00.000Z' },
    { content: 'world tour plans for 2023', createdAt: '2023-06-01T10:00:00.000Z', tags: ['travel'] },
    { content: 'coffee at nine on Monday', createdAt: '2024-02-02T10:00:00.000Z' },
  ].map((input, n) => ({ id: `mem_${n}`, store: 'agent', scope: alice.scope, kind: 'semantic', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit: { via: 'import' }, updatedAt: input.createdAt, version: 1, status: 'active', ...input }) as MemoryRecord)
  const queries = ['May 2023', 'world', 'Monday coffee', 'trip in May', 'travel 2023', 'Lyon']
  const search = (index: ReturnType<typeof createSearchIndex>, query: string) => index.search({ query }).map(hit => [hit.record.id, hit.score])

  it('false ranks exactly as an index of title, content and tags alone', () => {
    const off = createSearchIndex({ dateWords: false })
    const plain = createEngineIndex<MemoryRecord>({ text: { title: record => record.title ?? '', content: searchableContent, tags: searchableTags } })
    for (const record of records) {
      off.update(record)
      plain.update(record)
    }
    for (const query of queries) expect(search(off, query)).toEqual(search(plain, query))
    expect(search(off, 'Monday')).toEqual([['mem_3', expect.any(Number)]])
  })

  it('"occurred" takes the words of occurredAt only; the default "event" falls back to createdAt', () => {
    const occurred = createSearchIndex({ dateWords: 'occurred' })
    const event = createSearchIndex()
    for (const record of records) {
      occurred.update(record)
      event.update(record)
    }
    expect(search(occurred, 'Saturday').map(([id]) => id)).toEqual(['mem_1'])
    expect(search(event, 'Saturday').map(([id]) => id)).toEqual(['mem_1'])
    expect(search(occurred, 'Thursday')).toEqual([])
    expect(search(event, 'Thursday').map(([id]) => id)).toEqual(['mem_2'])
  })
})

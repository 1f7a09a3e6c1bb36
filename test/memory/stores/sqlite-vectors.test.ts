import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { embedMemoryScope } from '../../../src/memory/embeddings.ts'
import { sqliteMemoryStore } from '../../../src/memory/stores/sqlite.ts'
import { hybridSearch } from '../../../src/memory/hybrid-search.ts'
import { normalizeVector } from '../../../src/search/vectors.ts'
import { countingEmbedder, wordVector } from '../../search/vectors-embedder.ts'

const target = { store: 'agent', scope: { agent: 'support' } }
const audit = { via: 'api' }
const folders: string[] = []
afterAll(() => { for (const folder of folders) rmSync(folder, { recursive: true, force: true }) })

function databaseFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-sqlite-vectors-'))
  folders.push(dir)
  return join(dir, 'memory.db')
}

const blobOf = (text: string) => Buffer.from(normalizeVector(wordVector(text)).buffer)
const stored = (file: string) => Buffer.concat([readFileSync(file), ...(existsSync(`${file}-wal`) ? [readFileSync(`${file}-wal`)] : [])])

describe('sqliteMemoryStore record vectors', () => {
  it('keeps record vectors in the database: a new connection embeds only the query', async () => {
    const file = databaseFile()
    const first = sqliteMemoryStore({ file })
    const adapter = first.create()
    for (const content of ['Melanie goes surfing every weekend', 'Jon opened a dance studio']) await adapter.append(target, { kind: 'semantic', content }, { audit })
    expect(await embedMemoryScope(adapter, target, countingEmbedder())).toEqual({ embedded: 2 })
    await first.close()
    const second = sqliteMemoryStore({ file })
    const model = countingEmbedder()
    const hits = await hybridSearch(second.create(), target, { query: 'surfing', limit: 1 }, { model })
    expect(hits.map(hit => hit.record.content)).toEqual(['Melanie goes surfing every weekend'])
    expect(model.batches).toEqual([['surfing']])
    await second.close()
  })

  it('hardDelete removes the record vector from the database file and its WAL', async () => {
    const file = databaseFile()
    const factory = sqliteMemoryStore({ file })
    const adapter = factory.create()
    const erased = await adapter.append(target, { kind: 'semantic', content: 'Caroline adopted two children' }, { audit })
    await adapter.append(target, { kind: 'semantic', content: 'Jon opened a dance studio' }, { audit })
    await embedMemoryScope(adapter, target, countingEmbedder())
    expect(stored(file).includes(blobOf('Caroline adopted two children'))).toBe(true)
    expect(await adapter.hardDelete(target, erased.id, { audit })).toBe(true)
    expect(stored(file).includes(blobOf('Caroline adopted two children'))).toBe(false)
    expect(stored(file).includes(blobOf('Jon opened a dance studio'))).toBe(true)
    await factory.close()
  })
})

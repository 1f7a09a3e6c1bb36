import { describe, expect, it } from 'vitest'
import { exportMemoryScope, importMemoryScope } from '../../../src/memory/retention.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../../../src/memory/types.ts'
import { everyStoreFamily } from '../../helpers/store-matrix.ts'

// Re-importing a file adds nothing (docs/memory-kinds-and-retention.md, Export and import), also
// when the file comes from another scope of the same store, whose ids the target cannot take.

const ann: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'ann' } }
const ben: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'ben' } }
const api = { audit: { via: 'api' as const } }
const importer = { audit: { via: 'import' as const, agent: 'support', user: 'ben' } }

/** Ann's scope: a supersede chain (Paris -> Lyon), one more active record and a deleted one. */
async function annScope(adapter: MemoryStoreAdapter) {
  const paris = await adapter.append(ann, { kind: 'semantic', content: 'lives in Paris' }, api)
  await adapter.append(ann, { kind: 'semantic', content: 'lives in Lyon', supersedes: [paris.id] }, api)
  await adapter.append(ann, { kind: 'profile', content: 'prefers email' }, api)
  const gone = await adapter.append(ann, { kind: 'semantic', content: 'phone 555' }, api)
  await adapter.delete(ann, gone.id, { ...api, reason: 'user asked' })
  return exportMemoryScope(adapter, ann)
}

const shape = (records: Array<{ kind: string; content: string; status: string }>) => records.map(({ kind, content, status }) => [kind, content, status])

for (const [name, open] of await everyStoreFamily('vam-reimport')) {
  describe(`${name}: importing another scope's export`, () => {
    it('a second import of another user\'s export into the same scope adds nothing and reports every record already present', async () => {
      const adapter = await open()
      const file = await annScope(adapter)
      await adapter.append(ben, { kind: 'semantic', content: 'owns a cat' }, api)
      expect(await importMemoryScope(adapter, ben, file, importer)).toMatchObject({ added: 4, skipped: 0, duplicates: 0, renamed: 4 })
      const once = await adapter.export(ben)
      expect(shape(once)).toEqual([['semantic', 'owns a cat', 'active'], ['semantic', 'lives in Paris', 'superseded'], ['semantic', 'lives in Lyon', 'active'], ['profile', 'prefers email', 'active'], ['semantic', 'phone 555', 'deleted']])
      expect(once[1]!.supersededBy).toBe(once[2]!.id)
      expect(once[2]!.supersedes).toEqual([once[1]!.id])

      for (let run = 0; run < 2; run++) {
        expect(await importMemoryScope(adapter, ben, file, importer)).toMatchObject({ added: 0, skipped: 4, duplicates: 0, renamed: 0 })
        expect(await adapter.export(ben)).toEqual(once)
      }
      // Ann's own records are untouched, and importing her file into her own scope adds nothing either.
      expect(await importMemoryScope(adapter, ann, file, importer)).toMatchObject({ added: 0, skipped: 4 })
      expect(await adapter.export(ann)).toEqual(file.records)
    })

    it('importing another user\'s export whose active records the scope already holds adds the superseded record once, not on every import', async () => {
      const adapter = await open()
      const file = await annScope(adapter)
      for (const [kind, content] of [['semantic', 'lives in Lyon'], ['profile', 'prefers email'], ['semantic', 'owns a cat']] as const) await adapter.append(ben, { kind, content }, api)
      expect(await importMemoryScope(adapter, ben, file, importer)).toMatchObject({ added: 2, duplicates: 2, renamed: 2 })
      const once = await adapter.export(ben)
      expect(once).toHaveLength(5)
      const paris = once.find(record => record.content === 'lives in Paris')!
      expect(paris).toMatchObject({ status: 'superseded', supersededBy: once[0]!.id })
      const again = await importMemoryScope(adapter, ben, file, importer)
      expect(again).toMatchObject({ added: 0, renamed: 0 })
      expect(again.skipped + again.duplicates).toBe(4)
      expect(await adapter.export(ben)).toEqual(once)
    })

    it('two active records of one content and kind in one file import as one record and one duplicate, and a record superseded by the second points at the first', async () => {
      const adapter = await open()
      const at = '2026-01-05T10:00:00.000Z'
      const record = (id: string, content: string, extra: object = {}) => ({ id, kind: 'semantic', content, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit: { via: 'api' }, createdAt: at, updatedAt: at, version: 1, status: 'active', ...extra })
      const file = { store: 'agent', scope: ann.scope, records: [
        record('mem_tea_one', 'Likes green tea'),
        record('mem_tea_old', 'likes tea', { version: 2, status: 'superseded', supersededBy: 'mem_tea_two' }),
        record('mem_tea_two', '  likes GREEN   tea ', { supersedes: ['mem_tea_old'] }),
      ] }
      expect(await importMemoryScope(adapter, ben, file, importer)).toMatchObject({ added: 2, duplicates: 1 })
      const records = await adapter.export(ben)
      expect(shape(records)).toEqual([['semantic', 'Likes green tea', 'active'], ['semantic', 'likes tea', 'superseded']])
      expect(records[1]!.supersededBy).toBe(records[0]!.id)
      expect(await importMemoryScope(adapter, ben, file, importer)).toMatchObject({ added: 0 })
      expect(await adapter.export(ben)).toEqual(records)
    })
  })
}

import { describe, expect, it } from 'vitest'
import { hardDeleteMemoryRecord, importMemoryScope } from '../../../src/memory/retention.ts'
import type { MemoryRecord, MemoryRecordInput, MemoryStoreAdapter, MemoryTarget } from '../../../src/memory/types.ts'
import { everyStoreFamily } from '../../helpers/store-matrix.ts'

// The duplicate check (hosted-memory document, duplicate suppression) finds content that is active
// in the scope and kind whatever the events that left it active: a record superseded, deleted or
// erased while another record of the same content stays active leaves that one a duplicate.

const target: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'ann' } }
const api = { via: 'api' as const }
const tea: MemoryRecordInput = { kind: 'semantic', content: 'I like tea' }

/** A `memory_remember` of `input`: `duplicates: 'skip'`; the action it reports and the record. */
async function remember(adapter: MemoryStoreAdapter, input: MemoryRecordInput): Promise<{ action: 'created' | 'duplicate'; record: MemoryRecord }> {
  let action: 'created' | 'duplicate' = 'created'
  const record = await adapter.append(target, input, { audit: api, duplicates: 'skip', onDuplicate: () => { action = 'duplicate' } })
  return { action, record }
}

const activeIds = async (adapter: MemoryStoreAdapter) => (await adapter.export(target)).filter(record => record.status === 'active').map(record => record.id)

for (const [name, open] of await everyStoreFamily('vam-dup-holders')) {
  describe(`${name}: duplicates after a record of the same content leaves the active set`, () => {
    it('content superseded by a record of the same content stays a duplicate for the next remember', async () => {
      const adapter = await open()
      const first = await remember(adapter, tea)
      expect((await remember(adapter, tea)).action).toBe('duplicate')
      const pinned = await remember(adapter, { ...tea, pinned: true, supersedes: [first.record.id] })
      expect(pinned.action).toBe('created')
      const again = await remember(adapter, tea)
      expect(again).toMatchObject({ action: 'duplicate', record: { id: pinned.record.id, pinned: true } })
      expect((await remember(adapter, tea)).action).toBe('duplicate')
      expect(await activeIds(adapter)).toEqual([pinned.record.id])
      expect((await adapter.search(target, { query: 'tea' })).map(hit => hit.record.id)).toEqual([pinned.record.id])
    })

    it('with several active records of the same content, a remember is a duplicate of the oldest', async () => {
      const adapter = await open()
      const holders: string[] = []
      for (let n = 0; n < 5; n++) holders.push((await adapter.append(target, { ...tea, content: n % 2 === 0 ? 'I like tea' : 'i LIKE  tea' }, { audit: api })).id)
      expect(await remember(adapter, tea)).toMatchObject({ action: 'duplicate', record: { id: holders[0] } })
      await adapter.delete(target, holders[0]!, { audit: api })
      expect(await remember(adapter, tea)).toMatchObject({ action: 'duplicate', record: { id: holders[1] } })
    })

    it('deleting one of two active records of the same content leaves the other a duplicate, and deleting both makes the content new', async () => {
      const adapter = await open()
      const a = await adapter.append(target, tea, { audit: api })
      expect((await remember(adapter, tea)).record.id).toBe(a.id)
      const b = await adapter.append(target, tea, { audit: api })
      await adapter.delete(target, a.id, { audit: api })
      expect(await remember(adapter, tea)).toMatchObject({ action: 'duplicate', record: { id: b.id } })
      await adapter.delete(target, b.id, { audit: api })
      const fresh = await remember(adapter, tea)
      expect(fresh.action).toBe('created')
      expect(await activeIds(adapter)).toEqual([fresh.record.id])
    })

    it('erasing one of two active records of the same content leaves the other a duplicate', async () => {
      const adapter = await open()
      const a = await adapter.append(target, tea, { audit: api })
      expect((await remember(adapter, tea)).record.id).toBe(a.id)
      const b = await adapter.append(target, tea, { audit: api })
      await hardDeleteMemoryRecord(adapter, target, a.id, { audit: api })
      expect(await remember(adapter, tea)).toMatchObject({ action: 'duplicate', record: { id: b.id } })
      expect(await activeIds(adapter)).toEqual([b.id])
    })

    it('after importing a chain whose newer record has the old one\'s content, an active record of that content imports as a duplicate', async () => {
      const adapter = await open()
      expect((await remember(adapter, { kind: 'semantic', content: 'owns a cat' })).action).toBe('created')
      // The map of the scope exists before the import (a remember looked it up).
      const older = { id: 'mem_00000000000000000000000000000001', store: 'agent', scope: target.scope, kind: 'semantic', content: 'I like tea', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit: api, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-02T00:00:00.000Z', version: 2, status: 'superseded', supersededBy: 'mem_00000000000000000000000000000002' }
      const newer = { ...older, id: 'mem_00000000000000000000000000000002', pinned: true, supersedes: [older.id], createdAt: '2024-01-02T00:00:00.000Z', version: 1, status: 'active' }
      delete (newer as Partial<typeof newer>).supersededBy
      const file = { store: 'agent', scope: target.scope, records: [older, newer] }
      expect(await importMemoryScope(adapter, target, file, { audit: api })).toMatchObject({ added: 2, duplicates: 0 })
      const copy = { ...newer, id: 'mem_00000000000000000000000000000003', pinned: false, supersedes: [] }
      expect(await importMemoryScope(adapter, target, { ...file, records: [copy] }, { audit: api })).toMatchObject({ added: 0, duplicates: 1 })
      expect(await remember(adapter, tea)).toMatchObject({ action: 'duplicate', record: { id: newer.id } })
    })
  })
}

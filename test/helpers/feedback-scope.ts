/**
 * RM3 feedback of the default ranking as a SQL store mirrors it, for the tests of each SQL store:
 * the best record for "hiking" lends its telling words ("Max", "mountains", held by 2 of 22
 * records) to a second ranking, which finds a record holding no query word; the order is the
 * JSONL engine's (`inMemoryMemoryStore`).
 */
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import type { MemoryAudit, MemoryStoreAdapter, MemoryTarget } from '../../src/memory/types.ts'

export async function feedbackRanking(adapter: MemoryStoreAdapter, target: MemoryTarget, audit: MemoryAudit): Promise<{ store: string[]; engine: string[] }> {
  const engine = await inMemoryMemoryStore().create({ store: target.store, agent: 'support', writable: true })
  const contents = ['Caroline went hiking with her dog Max in the mountains', 'Max loves the snowy mountains', ...Array.from({ length: 20 }, (_, n) => `note ${n} about groceries and the weather`)]
  for (const store of [adapter, engine]) for (const content of contents) await store.append(target, { kind: 'semantic', content }, { audit })
  const found = async (store: MemoryStoreAdapter) => (await store.search(target, { query: 'hiking' })).map(hit => hit.record.content)
  return { store: await found(adapter), engine: await found(engine) }
}

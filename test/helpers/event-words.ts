/**
 * The date words of a record follow its event time (`occurredAt`, else `createdAt`), for the tests
 * of each store: a record imported with only a `createdAt` is found by that date's weekday, month
 * and year, and a record with an `occurredAt` only by the words of its `occurredAt`.
 */
import { expect } from 'vitest'
import type { MemoryStoreAdapter, MemoryTarget } from '../../src/memory/types.ts'

const target: MemoryTarget = { store: 'agent', scope: { agent: 'support' } }
const audit = { via: 'import' as const }

export async function expectDateWordsFollowEventTime(adapter: MemoryStoreAdapter): Promise<void> {
  const june = await adapter.append(target, { kind: 'episodic', content: 'went to a support group', createdAt: '2023-06-03T10:00:00Z' }, { audit })
  const november = await adapter.append(target, { kind: 'episodic', content: 'went to a pottery class', createdAt: '2022-11-20T10:00:00Z' }, { audit })
  const april = await adapter.append(target, { kind: 'episodic', content: 'went to a concert', createdAt: '2023-06-03T10:00:00Z', occurredAt: '2021-04-10' }, { audit })
  const ids = async (query: string) => (await adapter.search(target, { query })).map(hit => hit.record.id)
  expect(await ids('what happened in June 2023')).toEqual([june.id])
  expect(await ids('Sunday November')).toEqual([november.id])
  expect(await ids('April 2021')).toEqual([april.id])
}

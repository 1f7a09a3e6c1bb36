import { expect } from 'vitest'
import { searchRecords, substringScoreOf } from '../../src/memory/search-index.ts'
import type { MemoryRecord, MemorySearchQuery } from '../../src/memory/types.ts'

/**
 * Asserts that a ranked page holds the substring rule's page up to the order of its ties
 * (`tiesByRelevance`): every documented hit above the page's lowest score, or every hit when the
 * page is not full, and at least as many records of the lowest score as the documented page.
 */
export function expectDocumentedPage(ranked: ReadonlyArray<{ record: MemoryRecord }>, records: readonly MemoryRecord[], query: MemorySearchQuery & { limit: number }): void {
  const documented = searchRecords(records, query)
  const ids = new Set(ranked.map(hit => hit.record.id))
  const floor = documented.at(-1)?.score ?? 0
  const full = documented.length === query.limit
  for (const hit of documented) if (!full || hit.score > floor) expect(ids.has(hit.record.id), `${hit.record.id} (substring score ${hit.score}) is on the ranked page`).toBe(true)
  const atFloor = ranked.filter(hit => floor > 0 && substringScoreOf(hit.record, query) === floor).length
  expect(atFloor).toBeGreaterThanOrEqual(documented.filter(hit => hit.score === floor).length)
}

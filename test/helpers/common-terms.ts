/**
 * A scope larger than the SQL ranking's top-k cut (`RANKING_CANDIDATES_PER_TERM`), for the tests
 * of that cut on each SQL store: every record holds "weekend", most hold "garden" or "sunset",
 * three hold all three words, and the three oldest are the only `procedural` records.
 */
import { RANKING_CANDIDATES_PER_TERM } from '../../src/memory/stores/sql/core.ts'
import type { MemoryAudit, MemoryStoreAdapter, MemoryTarget } from '../../src/memory/types.ts'

export interface CommonTermsScope {
  /** Ids of the records holding "weekend", "garden" and "sunset". */
  allThree: string[]
  /** Ids of the three oldest records, the only `procedural` ones (oldest first). */
  procedural: string[]
}

export async function fillCommonTermsScope(adapter: MemoryStoreAdapter, target: MemoryTarget, audit: MemoryAudit): Promise<CommonTermsScope> {
  const count = RANKING_CANDIDATES_PER_TERM + 100
  const scope: CommonTermsScope = { allThree: [], procedural: [] }
  for (let n = 0; n < count; n++) {
    const words = ['weekend', ...(n % 4 !== 0 ? ['garden'] : []), ...(n % 4 === 0 || n % 3 === 0 ? ['sunset'] : [])]
    const three = n === 40 || n === 140 || n === 240
    const content = three ? `plans for the weekend: the garden at sunset, note ${n}` : `plans for the ${words.join(' and ')}, note ${n} with some more words to read`
    const record = await adapter.append(target, { kind: n < 3 ? 'procedural' : 'semantic', content }, { audit })
    if (three) scope.allThree.push(record.id)
    if (n < 3) scope.procedural.push(record.id)
  }
  return scope
}

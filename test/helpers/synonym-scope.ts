/**
 * The synonym expansion of the default ranking as a SQL store mirrors it, for the tests of each
 * SQL store: a query word finds a record holding only a word of its synonym group (synonyms.ts:
 * "kids" and "children"), below a record holding the word itself, and scored at the default
 * synonym weight of what the synonym itself as the query would give it.
 */
import { DEFAULT_SEARCH_INDEX_OPTIONS } from '../../src/search/search.ts'
import type { MemoryAudit, MemoryStoreAdapter, MemoryTarget } from '../../src/memory/types.ts'

export interface SynonymRanking {
  /** Contents found for "kids", best first. */
  contents: string[]
  /** Score of the "children" record for the query "kids", and for the query "children". */
  bySynonym: number
  byOwnWord: number
  /** The default synonym weight. */
  weight: number
}

export async function synonymRanking(adapter: MemoryStoreAdapter, target: MemoryTarget, audit: MemoryAudit): Promise<SynonymRanking> {
  for (const content of ['the kids played football after school', 'my children love the park', 'the weather is nice today', 'a film about the sea']) {
    await adapter.append(target, { kind: 'semantic', content }, { audit })
  }
  const kids = await adapter.search(target, { query: 'kids' })
  const children = await adapter.search(target, { query: 'children' })
  const scoreOf = (hits: typeof kids) => hits.find(hit => hit.record.content === 'my children love the park')?.score ?? Number.NaN
  return { contents: kids.map(hit => hit.record.content), bySynonym: scoreOf(kids), byOwnWord: scoreOf(children), weight: DEFAULT_SEARCH_INDEX_OPTIONS.synonyms.weight }
}

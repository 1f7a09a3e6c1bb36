/**
 * Baseline for the store benchmarks (issue 12; reused by issue 13): MiniSearch with one index per
 * scope, held in process memory (BM25-like ranking, no persistence of its own).
 */
import MiniSearch from 'minisearch'

/** MiniSearch indexes, one per scope. */
export interface MiniSearchBaseline {
  insert(scope: string, content: string): void
  search(scope: string, query: string, limit?: number): Array<{ id: number; score: number }>
  /** The index of one scope as JSON text, and a way back (what a cold open would load). */
  toJSON(scope: string): string
  load(scope: string, json: string): void
}

const options = { fields: ['content'], storeFields: [] as string[] }

export function createMiniSearchBaseline(): MiniSearchBaseline {
  const indexes = new Map<string, MiniSearch>()
  let next = 0
  const indexOf = (scope: string) => {
    let index = indexes.get(scope)
    if (!index) indexes.set(scope, index = new MiniSearch(options))
    return index
  }
  return {
    insert: (scope, content) => indexOf(scope).add({ id: next++, content }),
    search: (scope, query, limit = 10) => (indexes.get(scope)?.search(query) ?? []).slice(0, limit).map(hit => ({ id: hit.id as number, score: hit.score })),
    toJSON: scope => JSON.stringify(indexOf(scope)),
    load: (scope, json) => { indexes.set(scope, MiniSearch.loadJSON(json, options)) },
  }
}

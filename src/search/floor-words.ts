/**
 * The records a full page of the substring rule may give its places at its lowest score to, in
 * ranked search (`wordsFirstAtFloor` in substring-rule.ts): records holding a word of the query,
 * found through the postings of the ranking's terms instead of every record the rule counts.
 */
import { offer } from './substring-index.ts'
import type { CheckedQuery } from './query.ts'
import type { ScoredSlot } from './slots.ts'
import type { IndexState } from './state.ts'
import { substringScore } from './substring-rule.ts'
import { TopK } from './top-k.ts'
import type { SearchDocument } from './types.ts'

/**
 * At most `wanted` live slots, the newest first, that hold one of `terms`, are not on `page` (the
 * rule's full page, best first), pass the filters and score the page's lowest substring score.
 * Postings are read from their end (the newest slots), so once `wanted` are found an older slot
 * costs one comparison, not a count of the query in its text.
 */
export function floorContenders<D extends SearchDocument>(state: IndexState<D>, checked: CheckedQuery, terms: ReadonlyMap<string, number>, page: readonly ScoredSlot[], wanted: number): ScoredSlot[] {
  const { slots, vocabulary } = state
  const floor = page[page.length - 1]!.score
  const onPage = new Set(page.map(hit => hit.slot))
  const top = new TopK<ScoredSlot>(wanted, slots.compare)
  // Slots counted already (two terms may hold one).
  const counted = new Set<number>()
  const data = vocabulary.termPostings.data
  for (const term of terms.keys()) {
    const id = vocabulary.termIds.get(term)
    if (id === undefined || vocabulary.termFrequency[id] === 0) continue
    const ranges = vocabulary.termPostings.blocks(id, [])
    for (let range = ranges.length - 2; range >= 0; range -= 2) {
      for (let at = ranges[range + 1]! - 2; at >= ranges[range]!; at -= 2) {
        const slot = data[at]!
        if (slots.alive[slot] === 0 || onPage.has(slot) || counted.has(slot)) continue
        const lowest = top.floor()
        if (lowest && slots.compare({ slot, score: floor }, lowest) <= 0) continue
        counted.add(slot)
        if (substringScore(slots.records[slot]!, checked.needle, state.text) === floor) offer(slots, top, slot, floor, checked)
      }
    }
  }
  return top.sorted()
}

/**
 * Neighbour share of hybrid search: the records written just before and after a fused
 * candidate on the same day (the other facts of one conversation, one session of an import) get
 * a share of its score: facts remembered together are often read together, and the one a
 * question needs may share no word or meaning with it but sit next to one that does. Measured on the LoCoMo dev conversations, leave one conversation out
 * (`bench/recall-loco-folds.ts`, docs/search-and-recall.md "Neighbour share").
 */
import { cloneRecord } from './records.ts'
import type { HybridScope } from './hybrid-scope.ts'
import type { MemoryRecord, MemorySearchHit } from './types.ts'

/** A fused candidate: its hit and its fused score. */
export interface FusedEntry {
  hit: MemorySearchHit
  score: number
}

/** The day a record's event lies on: the date part of `occurredAt` as written, else of `createdAt`. */
function eventDay(record: MemoryRecord): string {
  return (record.occurredAt ?? record.createdAt).slice(0, 10)
}

/**
 * Lifts, in place, each record within `span` of a candidate in the scope's creation order (same
 * event day, passing `passes`) to at least its own fused score plus `share` × the candidate's;
 * the greatest such lift counts, read from the scores before any lift (no chains). A neighbour
 * that was no candidate is added after the candidates, in the order it was first reached.
 * `share` 0 or `span` 0 changes nothing. Cost: `2 × span` neighbours per candidate.
 */
export function shareWithNeighbours(fused: Map<string, FusedEntry>, scope: HybridScope, share: number, span: number, passes: (record: MemoryRecord) => boolean): void {
  if (share <= 0 || span <= 0) return
  const lifted = new Map<string, number>()
  for (const [id, entry] of fused) {
    const record = scope.records.get(id)
    if (!record) continue
    const day = eventDay(record)
    const keep = (other: string) => {
      const neighbour = scope.records.get(other)
      return neighbour !== undefined && eventDay(neighbour) === day
    }
    for (const other of scope.around(id, span, keep)) {
      if (!passes(scope.records.get(other)!)) continue
      const value = (fused.get(other)?.score ?? 0) + share * entry.score
      if (value > (lifted.get(other) ?? -Infinity)) lifted.set(other, value)
    }
  }
  for (const [id, value] of lifted) {
    const entry = fused.get(id)
    if (entry) entry.score = Math.max(entry.score, value)
    else fused.set(id, { hit: { record: cloneRecord(scope.records.get(id)!), score: 0 }, score: value })
  }
}

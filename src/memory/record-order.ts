/**
 * The creation order of a scope's active records as a doubly linked list of ids, so that the
 * records written just before and after one are found without scanning the scope: hybrid search
 * shares a hit's score with them (neighbour-share.ts). A record that leaves the active set is
 * unlinked, so its two neighbours become each other's.
 */

/** The creation order of one scope's active records. */
export interface RecordOrder {
  /** Starts over with these ids, in creation order. */
  reset(ids: Iterable<string>): void
  /** Adds an id after the last one (a new active record). */
  append(id: string): void
  /** Unlinks an id (a record no longer active); an unknown id is ignored. */
  remove(id: string): void
  /** Up to `span` ids on each side of `id`, nearest first, alternating earlier and later (`id - 1`, `id + 1`, `id - 2`...), each side stopping at the first id `keep` refuses. */
  around(id: string, span: number, keep: (id: string) => boolean): string[]
}

/** An empty {@link RecordOrder}. */
export function createRecordOrder(): RecordOrder {
  const previous = new Map<string, string | undefined>()
  const next = new Map<string, string | undefined>()
  let last: string | undefined
  const order: RecordOrder = {
    reset(ids) {
      previous.clear()
      next.clear()
      last = undefined
      for (const id of ids) order.append(id)
    },
    append(id) {
      if (previous.has(id)) return
      previous.set(id, last)
      next.set(id, undefined)
      if (last !== undefined) next.set(last, id)
      last = id
    },
    remove(id) {
      if (!previous.has(id)) return
      const before = previous.get(id)
      const after = next.get(id)
      if (before !== undefined) next.set(before, after)
      if (after !== undefined) previous.set(after, before)
      else last = before
      previous.delete(id)
      next.delete(id)
    },
    around(id, span, keep) {
      const out: string[] = []
      let earlier = previous.get(id)
      let later = next.get(id)
      for (let step = 0; step < span; step++) {
        if (earlier !== undefined && keep(earlier)) {
          out.push(earlier)
          earlier = previous.get(earlier)
        }
        else {
          earlier = undefined
        }
        if (later !== undefined && keep(later)) {
          out.push(later)
          later = next.get(later)
        }
        else {
          later = undefined
        }
      }
      return out
    },
  }
  return order
}

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { holderBitset } from '../../src/search/holder-bitsets.ts'
import { PairLists } from '../../src/search/postings.ts'

/** The keys whose bits are set in `words`, in increasing order. */
function keysOf(words: Int32Array, count: number): number[] {
  const keys: number[] = []
  for (let key = 0; key < count; key++) if (((words[key >>> 5]! >>> (key & 31)) & 1) === 1) keys.push(key)
  return keys
}

describe('holder bitsets', () => {
  it("a list's bitset holds exactly its keys, also after pairs are pushed once it was read", () => {
    // Per step: the keys each of three lists gets (increasing, as a posting list's slots are).
    const steps = fc.array(fc.array(fc.tuple(fc.integer({ min: 0, max: 2 }), fc.integer({ min: 1, max: 40 })), { maxLength: 30 }), { minLength: 1, maxLength: 4 })
    fc.assert(fc.property(steps, (batches) => {
      const lists = new PairLists()
      const ids = [lists.create(), lists.create(), lists.create()]
      const pushed: number[][] = [[], [], []]
      let count = 0
      for (const batch of batches) {
        for (const [list, gap] of batch) {
          count += gap
          lists.push(ids[list]!, count - 1, 1)
          pushed[list]!.push(count - 1)
        }
        for (let list = 0; list < 3; list++) expect(keysOf(holderBitset(lists, ids[list]!, count), count)).toEqual(pushed[list])
      }
    }), { numRuns: 200 })
  })
})

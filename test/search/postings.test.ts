import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { ByteReader, ByteWriter, fromBase64 } from '../../src/search/bytes.ts'
import { PairLists } from '../../src/search/postings.ts'

function pairsOf(lists: PairLists, id: number): number[] {
  const pairs: number[] = []
  lists.forEach(id, (key, value) => pairs.push(key, value))
  return pairs
}

describe('posting lists read back from their encoding', () => {
  it('hold the same pairs, and take the blocks of a first few pushes without copying their arena', () => {
    const lists = new PairLists()
    for (let id = 0; id < 50; id++) lists.create()
    // Runs of equal values (written as 0, "the previous value") among changing ones.
    for (let key = 0; key < 2000; key++) lists.push(key % 50, key, key % 150 < 100 ? 1 : 1 + (key % 7))
    const out = new ByteWriter(1024)
    lists.encode(out)
    const decoded = PairLists.decode(new ByteReader(fromBase64(out.base64())), 50, 2000, 1, 7)
    for (let id = 0; id < 50; id++) expect(pairsOf(decoded, id)).toEqual(pairsOf(lists, id))
    const arena = decoded.data
    // Each push to a decoded list starts a new block of that list.
    for (let id = 0; id < 3; id++) decoded.push(id, 2000 + id, 1)
    expect(decoded.data).toBe(arena)
    expect(pairsOf(decoded, 2).slice(-2)).toEqual([2002, 1])
  })

  it('refuse a list whose first value is written as its previous pair\'s (it has none)', () => {
    const out = new ByteWriter(16)
    out.uint(1)
    out.uint(1)
    out.int(3)
    out.uint(0)
    expect(() => PairLists.decode(new ByteReader(fromBase64(out.base64())), 1, 10, 1, 7)).toThrow(/out of range/)
  })
})

describe('the blocks of a list after its first pairs', () => {
  it('hold exactly the pairs after the first `skip`, in push order, whatever the blocks and the skip', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 400 }), fc.integer({ min: 0, max: 420 }), (ids, skip) => {
      // A small arena: lists interleave and grow over many blocks.
      const lists = new PairLists(4, 8)
      for (let id = 0; id < 4; id++) lists.create()
      ids.forEach((id, key) => lists.push(id, key, key * 3))
      for (let id = 0; id < 4; id++) {
        const after: number[] = []
        const ranges = lists.blocksAfter(id, skip, [])
        for (let range = 0; range < ranges.length; range += 2) {
          for (let at = ranges[range]!; at < ranges[range + 1]!; at += 2) after.push(lists.data[at]!, lists.data[at + 1]!)
        }
        expect(after).toEqual(pairsOf(lists, id).slice(skip * 2))
      }
    }))
  })
})

import { describe, expect, it } from 'vitest'
import { createSearchIndex, type MemorySearchIndexOptions } from '../../src/memory/search-index.ts'
import type { MemoryRecord } from '../../src/memory/types.ts'
import { record } from '../fixtures/records.ts'

const ONLY_BM25F: MemorySearchIndexOptions = { feedback: { records: 0 }, proximity: { weight: 0 }, tagBoost: 1 }

function search(records: MemoryRecord[], query: string, options: MemorySearchIndexOptions = {}) {
  const index = createSearchIndex(options)
  for (const item of records) index.update(item)
  return index.search({ query })
}
const scoreOf = (hits: Array<{ record: MemoryRecord; score: number }>, item: MemoryRecord) => hits.find(hit => hit.record.id === item.id)?.score

// Same words and lengths: BM25F alone scores them alike, only the distance of the query words differs.
const near = record({ content: 'salsa dancing lessons every friday evening downtown with friends' })
const far = record({ content: 'salsa lessons every friday evening downtown with friends dancing' })
const filler = Array.from({ length: 8 }, (_, n) => record({ content: `weekly market number ${n} sells fresh bread` }))

describe('re-ranking: proximity bonus', () => {
  it('ranks a record holding two query words within 3 positions above one holding them far apart', () => {
    const hits = search([far, near, ...filler], 'salsa dancing')
    expect(hits.map(hit => hit.record.id).slice(0, 2)).toEqual([near.id, far.id])
    expect(scoreOf(hits, near)!).toBeGreaterThan(scoreOf(hits, far)!)
  })

  it('adds 0.5 x the smaller idf per near pair: { weight: 0 } gives the BM25F score', () => {
    const off = search([far, near, ...filler], 'salsa dancing', { ...ONLY_BM25F })
    const on = search([far, near, ...filler], 'salsa dancing', { ...ONLY_BM25F, proximity: { weight: 0.5 } })
    expect(scoreOf(off, near)).toBe(scoreOf(off, far))
    expect(scoreOf(on, far)).toBe(scoreOf(off, far))
    // Both words are in 2 of 10 records: idf = ln(1 + (10 - 2 + 0.5) / (2 + 0.5)).
    const idf = Math.log(1 + 8.5 / 2.5)
    expect(scoreOf(on, near)!).toBeCloseTo(scoreOf(off, near)! + 0.5 * idf, 3)
  })

  it('gives a record whose text is not ASCII the bonus of its ASCII twin (each field read by its own path)', () => {
    const accented = record({ title: 'Café notes', content: 'salsa dancing lessons at the café downtown' })
    const plain = record({ title: 'Cafe notes', content: 'salsa dancing lessons at the cafe downtown' })
    const hits = search([accented, ...filler], 'cafe salsa dancing')
    const twin = search([plain, ...filler], 'cafe salsa dancing')
    expect(scoreOf(hits, accented)).toBe(scoreOf(twin, plain))
    expect(scoreOf(hits, accented)!).toBeGreaterThan(scoreOf(search([accented, ...filler], 'cafe salsa dancing', ONLY_BM25F), accented)!)
  })

  it('counts no pair across fields', () => {
    const split = record({ title: 'salsa', content: 'dancing lessons every friday evening downtown with friends' })
    const off = search([split, ...filler], 'salsa dancing', ONLY_BM25F)
    const on = search([split, ...filler], 'salsa dancing', { ...ONLY_BM25F, proximity: { weight: 0.5 } })
    expect(scoreOf(on, split)).toBe(scoreOf(off, split))
  })
})

describe('re-ranking: tag boost', () => {
  const tagged = record({ content: 'went hiking near the lake on sunday', tags: ['Melanie'] })
  const untagged = record({ content: 'went hiking near the lake on sunday melanie', tags: ['Caroline'] })

  it('multiplies by 1.5 the score of a record one of whose tags the query names', () => {
    const off = search([tagged, untagged, ...filler], 'Where did Melanie go hiking?', ONLY_BM25F)
    const on = search([tagged, untagged, ...filler], 'Where did Melanie go hiking?', { ...ONLY_BM25F, tagBoost: 1.5 })
    expect(scoreOf(on, tagged)!).toBeCloseTo(scoreOf(off, tagged)! * 1.5, 3)
    expect(scoreOf(on, untagged)).toBe(scoreOf(off, untagged))
  })

  it('boosts only when every term of the tag is in the query', () => {
    const group = record({ content: 'met new people at the weekly meeting', tags: ['support group'] })
    const off = search([group, ...filler], 'weekly group meeting', ONLY_BM25F)
    const on = search([group, ...filler], 'weekly group meeting', { ...ONLY_BM25F, tagBoost: 1.5 })
    expect(scoreOf(on, group)).toBe(scoreOf(off, group))
    const named = search([group, ...filler], 'support group meeting', { ...ONLY_BM25F, tagBoost: 1.5 })
    expect(scoreOf(named, group)!).toBeGreaterThan(scoreOf(search([group, ...filler], 'support group meeting', ONLY_BM25F), group)!)
  })
})

import { describe, expect, it } from 'vitest'
import { createSearchIndex } from '../../src/memory/search-index.ts'
import { synonymsOf } from '../../src/search/synonyms.ts'
import { stemWord } from '../../src/search/text.ts'
import { record } from '../fixtures/records.ts'

describe('synonym expansion', () => {
  it('gives each word of a group the stems of the others, never itself', () => {
    expect(synonymsOf(stemWord('kids'), true)).toEqual([stemWord('child')])
    expect([...synonymsOf(stemWord('mom'), true)].sort()).toEqual([stemWord('mother'), stemWord('mum'), stemWord('mommy'), stemWord('mummy')].sort())
    expect(synonymsOf(stemWord('favourite'), true)).toEqual([stemWord('favorite')])
    expect(synonymsOf(stemWord('painting'), true)).toEqual([])
  })

  it('lets a query word find a record holding only its synonym, below a record holding the word, and not with weight 0', () => {
    const children = record({ content: 'Melanie took the children to the museum' })
    const kids = record({ content: 'Melanie took the kids to the museum' })
    const other = record({ content: 'a quiet afternoon in the garden' })
    const on = createSearchIndex()
    const off = createSearchIndex({ synonyms: { weight: 0 } })
    for (const index of [on, off]) for (const item of [children, kids, other]) index.update(item)
    const hits = on.search({ query: 'kids' })
    expect(hits.map(hit => hit.record.id)).toEqual([kids.id, children.id])
    expect(hits[1]!.score).toBeLessThan(hits[0]!.score)
    expect(off.search({ query: 'kids' }).map(hit => hit.record.id)).toEqual([kids.id])
  })
})

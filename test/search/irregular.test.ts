import { describe, expect, it } from 'vitest'
import { createSearchIndex } from '../../src/memory/search-index.ts'
import { IRREGULAR_FORMS } from '../../src/search/irregular.ts'
import { stemWord, tokenize } from '../../src/search/text.ts'
import { record } from '../fixtures/records.ts'

describe('irregular forms', () => {
  it('stems an irregular verb or noun form as its base word', () => {
    expect(tokenize('ran met children women bought')).toEqual(tokenize('run meet child woman buy'))
    expect(stemWord('ran')).toBe(stemWord('running'))
  })

  it('maps every form of the table to a different plain Latin base', () => {
    for (const [form, base] of IRREGULAR_FORMS) {
      expect(form).toMatch(/^[a-z]+$/)
      expect(base).toMatch(/^[a-z]+$/)
      expect(form).not.toBe(base)
    }
  })

  it('lets a query in the base form find the irregular form, and not with irregularForms: false', () => {
    const mice = record({ content: 'we found two mice in the garage' })
    const other = record({ content: 'a quiet afternoon in the garden' })
    const on = createSearchIndex()
    const off = createSearchIndex({ irregularForms: false })
    for (const index of [on, off]) for (const item of [mice, other]) index.update(item)
    expect(on.search({ query: 'mouse' }).map(hit => hit.record.id)).toEqual([mice.id])
    expect(off.search({ query: 'mouse' })).toEqual([])
  })
})

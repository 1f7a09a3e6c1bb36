import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { recordColumns, recordsOfColumns } from '../../src/memory/record-columns.ts'

const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null), fc.constant(0), fc.constant('active'), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string(), fc.string(), { maxKeys: 2 }))
const field = fc.constantFrom('id', 'store', 'kind', 'content', 'title', 'createdAt', 'updatedAt', 'status', 'occurredAt', 'metadata', 'constructor', 'toString')
const record = fc.uniqueArray(fc.tuple(field, value), { selector: entry => entry[0], maxLength: 8 }).map(entries => Object.fromEntries(entries))

describe('record columns (checkpoint version 6 sections)', () => {
  it('records read back from their columns equal them, field order included (property)', () => {
    fc.assert(fc.property(fc.array(record, { maxLength: 30 }), (records) => {
      const columns = JSON.parse(JSON.stringify(recordColumns(records)))
      const read = recordsOfColumns(columns, records.length)
      expect(read).toEqual(records)
      expect(read.map(own => Object.keys(own))).toEqual(records.map(own => Object.keys(own)))
    }), { numRuns: 300 })
  })

  it('a field every record holds alike is stored once, a field records differ in is one list, and one shape needs no shape list', () => {
    const records = [0, 1, 2].map(n => ({ id: `r${n}`, store: 'agent', kind: 'semantic', content: `note ${n}`, pinned: false, metadata: {} }))
    const columns = recordColumns(records)
    expect(columns).toEqual({
      keys: ['id', 'store', 'kind', 'content', 'pinned', 'metadata'],
      shapes: [[0, 1, 2, 3, 4, 5]],
      columns: [['r0', 'r1', 'r2'], { all: 'agent' }, { all: 'semantic' }, ['note 0', 'note 1', 'note 2'], { all: false }, [{}, {}, {}]],
    })
    const mixed = recordColumns([{ id: 'a', title: 't' }, { id: 'b' }])
    expect(mixed).toEqual({ keys: ['id', 'title'], shapes: [[0, 1], [0]], shape: [0, 1], columns: [['a', 'b'], { all: 't' }] })
  })

  it('columns that do not hold the records they name are refused', () => {
    const good = recordColumns([{ id: 'a', title: 't' }, { id: 'b' }])
    const refused = (edit: Record<string, unknown>, count = 2) => expect(() => recordsOfColumns({ ...good, ...edit }, count)).toThrow('the record columns are malformed')
    refused({}, 3)
    refused({ columns: [['a'], { all: 't' }] })
    refused({ columns: [['a', 'b'], 't'] })
    refused({ shape: [0, 2] })
    refused({ shape: undefined })
    refused({ shapes: [[0, 7], [0]] })
    refused({ keys: ['id', '__proto__'] })
    refused({ keys: undefined })
    expect(recordsOfColumns(good, 2)).toEqual([{ id: 'a', title: 't' }, { id: 'b' }])
  })
})

import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { createVectorIndex, decodeVector, encodeVector, normalizeVector } from '../../src/search/vectors.ts'

const cosine = (a: readonly number[], b: readonly number[]) => {
  let dot = 0, na = 0, nb = 0
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! * a[i]!; nb += b[i]! * b[i]! }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

const vector = (dims: number) => fc.array(fc.float({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }), { minLength: dims, maxLength: dims })

describe('exact vector search', () => {
  it('returns the k vectors of highest cosine similarity, best first, as a brute-force ranking does', () => {
    fc.assert(fc.property(fc.array(vector(7), { minLength: 1, maxLength: 40 }), vector(7), fc.integer({ min: 1, max: 12 }), (vectors, query, k) => {
      const index = createVectorIndex(7)
      vectors.forEach((v, i) => index.set(`r${i}`, v))
      const got = index.search(query, k)
      const expected = vectors.map((v, i) => ({ id: `r${i}`, similarity: cosine(v, query) })).sort((a, b) => b.similarity - a.similarity).slice(0, k)
      expect(got).toHaveLength(expected.length)
      got.forEach((match, i) => expect(match.similarity).toBeCloseTo(expected[i]!.similarity, 4))
    }))
  })

  it('a deleted vector is never returned and the others keep their own vectors', () => {
    const index = createVectorIndex(3)
    index.set('x', [1, 0, 0])
    index.set('y', [0, 1, 0])
    index.set('z', [0, 0, 1])
    expect(index.delete('x')).toBe(true)
    expect(index.delete('x')).toBe(false)
    expect(index.size).toBe(2)
    expect(index.search([1, 0, 0], 3).map(m => m.id)).not.toContain('x')
    expect(index.search([0, 0, 1], 1)).toEqual([{ id: 'z', similarity: 1 }])
    expect(index.search([0, 1, 0], 1)).toEqual([{ id: 'y', similarity: 1 }])
  })

  it('setting an id again replaces its vector', () => {
    const index = createVectorIndex(2)
    index.set('a', [1, 0])
    index.set('a', [0, 1])
    expect(index.size).toBe(1)
    expect(index.search([0, 1], 1)[0]!.similarity).toBeCloseTo(1, 6)
  })

  it('only ids the accept function takes are ranked', () => {
    const index = createVectorIndex(2)
    index.set('near', [1, 0])
    index.set('far', [0.5, 0.5])
    expect(index.search([1, 0], 2, id => id !== 'near').map(m => m.id)).toEqual(['far'])
  })

  it('ties go to the vector added first', () => {
    const index = createVectorIndex(2)
    for (const id of ['first', 'second', 'third']) index.set(id, [1, 1])
    expect(index.search([1, 1], 2).map(m => m.id)).toEqual(['first', 'second'])
  })

  it('after any sets and deletes, search ranks as an index built afresh from the vectors left, in the order they were added (ties included)', () => {
    const op = fc.oneof(fc.record({ set: fc.integer({ min: 0, max: 59 }), tie: fc.boolean() }), fc.record({ remove: fc.integer({ min: 0, max: 59 }) }))
    fc.assert(fc.property(fc.array(op, { minLength: 1, maxLength: 400 }), (ops) => {
      const index = createVectorIndex(2)
      const live = new Map<string, number[]>()
      ops.forEach((step, n) => {
        if ('set' in step) {
          const id = `r${step.set}`
          // Tied vectors (all [1, 1]) make the order decide; others are spread around the circle.
          const vector = step.tie ? [1, 1] : [Math.cos(n), Math.sin(n)]
          index.set(id, vector)
          live.set(id, vector)
        }
        else {
          expect(index.delete(`r${step.remove}`)).toBe(live.delete(`r${step.remove}`))
        }
      })
      const fresh = createVectorIndex(2)
      for (const [id, vector] of live) fresh.set(id, vector)
      expect(index.size).toBe(live.size)
      expect(index.search([1, 1], 60)).toEqual(fresh.search([1, 1], 60))
    }))
  })

  it('an index over a base array ranks as one built by set from the same vectors, after any sets and deletes (a replaced base row moves to the end), and never writes into the base', () => {
    const op = fc.oneof(fc.record({ set: fc.integer({ min: 0, max: 59 }), tie: fc.boolean() }), fc.record({ remove: fc.integer({ min: 0, max: 59 }) }))
    const row = fc.option(fc.record({ angle: fc.double({ min: 0, max: 6.28, noNaN: true }), tie: fc.boolean(), scale: fc.constantFrom(1, 1, 1, 3) }), { nil: undefined })
    fc.assert(fc.property(fc.array(row, { maxLength: 40 }), fc.array(op, { maxLength: 200 }), (rows, ops) => {
      const data = new Float32Array(rows.length * 2)
      const ids = rows.map((spec, n) => {
        if (!spec) return undefined
        // Unit rows as a block holds them, some tied, some not of unit length (scaled into the index's own array).
        const vector = normalizeVector(spec.tie ? [1, 1] : [Math.cos(spec.angle), Math.sin(spec.angle)])
        data.set(vector.map(value => value * spec.scale), n * 2)
        return `r${n}`
      })
      const before = data.slice()
      const index = createVectorIndex(2, { base: { ids, data } })
      // The expected insertion order: base rows first, then rescaled rows; a replaced base row moves to the end.
      const order = new Map<string, { vector: ArrayLike<number>; inBase: boolean }>()
      ids.forEach((id, n) => { if (id && rows[n]!.scale === 1) order.set(id, { vector: data.subarray(n * 2, n * 2 + 2), inBase: true }) })
      ids.forEach((id, n) => { if (id && rows[n]!.scale !== 1) order.set(id, { vector: data.slice(n * 2, n * 2 + 2), inBase: false }) })
      ops.forEach((step, n) => {
        if ('set' in step) {
          const id = `r${step.set}`
          const vector = step.tie ? [1, 1] : [Math.cos(n), Math.sin(n)]
          index.set(id, vector)
          const known = order.get(id)
          if (known?.inBase) order.delete(id)
          if (known && !known.inBase) known.vector = vector
          else order.set(id, { vector, inBase: false })
        }
        else {
          expect(index.delete(`r${step.remove}`)).toBe(order.delete(`r${step.remove}`))
        }
      })
      const fresh = createVectorIndex(2)
      for (const [id, { vector }] of order) fresh.set(id, vector)
      expect(index.size).toBe(order.size)
      const got = index.search([1, 1], 100)
      const expected = fresh.search([1, 1], 100)
      expect(got.map(match => match.id)).toEqual(expected.map(match => match.id))
      got.forEach((match, i) => expect(match.similarity).toBeCloseTo(expected[i]!.similarity, 5))
      expect(data).toEqual(before)
    }))
  })

  it('a vector of another length is a RangeError', () => {
    const index = createVectorIndex(3)
    expect(() => index.set('a', [1, 2])).toThrow(RangeError)
    expect(() => index.search([1, 2], 1)).toThrow(RangeError)
  })

  it('normalizeVector gives unit length, and a zero vector stays zero', () => {
    const unit = normalizeVector([3, 4])
    expect(Array.from(unit)).toEqual([Math.fround(0.6), Math.fround(0.8)])
    expect(Array.from(normalizeVector([0, 0]))).toEqual([0, 0])
  })
})

describe('vector codec', () => {
  it('decodeVector gives back what encodeVector wrote, bit for bit', () => {
    fc.assert(fc.property(vector(16), (values) => {
      const original = Float32Array.from(values)
      expect(decodeVector(encodeVector(original), 16)).toEqual(original)
    }))
  })

  it('decodeVector gives back every length, each base64 padding included, and rejects any non-finite value in it', () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 24 }).chain(dims => fc.tuple(vector(dims), fc.nat({ max: dims - 1 }), fc.constantFrom(Number.NaN, Infinity, -Infinity))), ([values, at, bad]) => {
      const original = Float32Array.from(values)
      expect(decodeVector(encodeVector(original), values.length)).toEqual(original)
      original[at] = bad
      expect(decodeVector(encodeVector(original), values.length)).toBeUndefined()
    }))
  })

  it('a text of another length or a non-finite value is not a vector', () => {
    const encoded = encodeVector(Float32Array.from([1, 2, 3]))
    expect(decodeVector(encoded, 4)).toBeUndefined()
    expect(decodeVector(encodeVector(Float32Array.from([1, Number.NaN])), 2)).toBeUndefined()
    expect(decodeVector(42, 1)).toBeUndefined()
  })
})

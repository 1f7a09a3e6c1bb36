import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { findTextProblem } from '../src/text.ts'

/** The reference: some string or key of `value` is not well formed, or it nests objects deeper than `maxDepth`. */
function hasProblem(value: unknown, depth: number, maxDepth: number): boolean {
  if (typeof value === 'string') return !value.isWellFormed()
  if (value === null || typeof value !== 'object') return false
  if (depth >= maxDepth) return true
  const entries = Array.isArray(value) ? value.map((item, index) => [String(index), item] as const) : Object.entries(value)
  return entries.some(([key, item]) => !key.isWellFormed() || hasProblem(item, depth + 1, maxDepth))
}

describe('findTextProblem', () => {
  it('finds a problem exactly when a string or key is not well formed or the value nests past the bound, whatever the value', () => {
    const text = fc.string({ unit: 'binary', maxLength: 4 })
    const { value } = fc.letrec(tie => ({
      value: fc.oneof({ depthSize: 'small' }, text, fc.integer(), fc.constant(null), fc.array(tie('value'), { maxLength: 3 }), fc.dictionary(text, tie('value'), { maxKeys: 3 })),
    }))
    fc.assert(fc.property(value, fc.integer({ min: 1, max: 4 }), (input, maxDepth) => {
      const problem = findTextProblem(input, maxDepth)
      expect(problem !== undefined).toBe(hasProblem(input, 0, maxDepth))
    }), { numRuns: 500 })
  })
})

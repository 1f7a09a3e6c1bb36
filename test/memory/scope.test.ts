import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { sameScope, scopeKey, scopeSlot, sharedScope, validateScope } from '../../src/memory/scope.ts'
import { canonicalJson } from '../../src/log/canonical-json.ts'
import { cloneRecord } from '../../src/memory/records.ts'
import type { MemoryRecord } from '../../src/memory/types.ts'
import { MEMORY_SCOPE_FIELDS, type MemoryScope } from '../../src/memory/types.ts'

describe('validateScope', () => {
  it('accepts a scope with one or all known fields', () => {
    expect(validateScope({ agent: 'support' })).toEqual({ agent: 'support' })
    const all = Object.fromEntries(MEMORY_SCOPE_FIELDS.map(field => [field, `${field}-1`]))
    expect(validateScope(all)).toEqual(all)
  })

  it.each([
    [{}],
    [{ agent: '' }],
    [{ agent: '', user: '' }],
  ])('a scope without a non-empty field (%j) is MEMORY_SCOPE_REQUIRED', (scope) => {
    expect(() => validateScope(scope)).toThrow(expect.objectContaining({ code: 'MEMORY_SCOPE_REQUIRED' }))
  })

  it.each([
    ['an unknown field', { agent: 'support', usr: 'alice' }, 'usr'],
    ['a number value', { agent: 'support', user: 42 }, 'user'],
    ['an undefined value (it must not widen the scope)', { agent: 'support', user: undefined }, 'user'],
    ['a null value', { agent: 'support', user: null }, 'user'],
    ['an empty value next to a non-empty one', { agent: 'support', user: '' }, 'user'],
    ['a blank value next to a non-empty one', { agent: 'support', user: '   ' }, 'user'],
  ])('a scope with %s is MEMORY_SCOPE_INVALID', (_name, scope, field) => {
    expect(() => validateScope(scope)).toThrow(expect.objectContaining({ code: 'MEMORY_SCOPE_INVALID', details: { field } }))
  })

  it.each([[null], [undefined], ['support'], [['agent']]])('a scope that is not an object (%j) is MEMORY_SCOPE_INVALID', (scope) => {
    expect(() => validateScope(scope)).toThrow(expect.objectContaining({ code: 'MEMORY_SCOPE_INVALID' }))
  })
})

describe('sameScope', () => {
  it('a scope { agent } and a scope { agent, user } are different, both ways', () => {
    expect(sameScope({ agent: 'a' }, { agent: 'a', user: 'u' })).toBe(false)
    expect(sameScope({ agent: 'a', user: 'u' }, { agent: 'a' })).toBe(false)
  })

  it('field order does not matter; every value must be equal', () => {
    expect(sameScope({ agent: 'a', user: 'u' }, { user: 'u', agent: 'a' })).toBe(true)
    expect(sameScope({ agent: 'a', user: 'u' }, { agent: 'a', user: 'U' })).toBe(false)
    expect(sameScope({ agent: 'a' }, { user: 'a' })).toBe(false)
  })
})

describe('scopeKey', () => {
  const value = fc.string({ unit: fc.constantFrom('a', 'b', ':', ',', '"', '[', ']', '\\', '=', ' ', 'é', 'e\u0301', '🎉'), minLength: 1, maxLength: 4 })
    .filter(text => text.trim().length > 0) // blank values are invalid scope values
  const scope: fc.Arbitrary<MemoryScope> = fc.record(
    { agent: value, user: value, tenant: value, thread: value },
    { requiredKeys: [] },
  ).filter(candidate => Object.keys(candidate).length > 0)

  it('two scopes share a key exactly when they are the same scope (separators, quotes and unicode cannot collide)', () => {
    fc.assert(fc.property(scope, scope, (a, b) => {
      expect(scopeKey(a) === scopeKey(b)).toBe(sameScope(a, b))
    }), { numRuns: 2000 })
  })

  it('is the JSON text of the sorted field pairs for any value (control characters, quotes, lone surrogates)', () => {
    const anyValue = fc.string({ unit: 'binary', minLength: 1, maxLength: 6 }).filter(text => text.trim().length > 0)
    fc.assert(fc.property(fc.record({ agent: anyValue, user: anyValue, tenant: anyValue }, { requiredKeys: ['agent'] }), (value) => {
      expect(scopeKey(value)).toBe(JSON.stringify(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : 1))))
    }), { numRuns: 2000 })
  })

  it('values that join to the same text give different keys', () => {
    expect(scopeKey({ agent: 'a:b' })).not.toBe(scopeKey({ agent: 'a', user: 'b' }))
    expect(scopeKey({ agent: 'a","user":"b' })).not.toBe(scopeKey({ agent: 'a', user: 'b' }))
    expect(scopeKey({ agent: 'é' })).not.toBe(scopeKey({ agent: 'e\u0301' }))
  })

  it('does not depend on field order', () => {
    expect(scopeKey({ user: 'u', agent: 'a' })).toBe(scopeKey({ agent: 'a', user: 'u' }))
  })

  it('throws the validation error for an invalid scope', () => {
    expect(() => scopeKey({})).toThrow(expect.objectContaining({ code: 'MEMORY_SCOPE_REQUIRED' }))
  })
})

describe('sharedScope', () => {
  it('equal scopes given as separate objects (any field order) are one frozen copy of their fields; another scope is another copy', () => {
    const first = sharedScope({ user: 'alice', agent: 'support' })
    expect(sharedScope({ agent: 'support', user: 'alice' })).toBe(first)
    expect(Object.isFrozen(first)).toBe(true)
    expect(Object.keys(first)).toEqual(['agent', 'user'])
    expect(sharedScope({ agent: 'support', user: 'bob' })).not.toBe(first)
    expect(() => sharedScope({ agent: 'support', user: '' })).toThrow(expect.objectContaining({ code: 'MEMORY_SCOPE_INVALID' }))
  })

  it('a shared scope has the keys, JSON and canonical JSON of its plain copy, and its copies carry none of its slot', () => {
    const field = fc.constantFrom(...MEMORY_SCOPE_FIELDS)
    const id = fc.string({ minLength: 1, maxLength: 12 }).filter(value => value.trim().length > 0)
    fc.assert(fc.property(fc.dictionary(field, id, { minKeys: 1 }), (value) => {
      const shared = sharedScope(value)
      const plain = validateScope(value)
      expect(Object.keys(shared)).toEqual(Object.keys(plain))
      expect(JSON.stringify(shared)).toBe(JSON.stringify(plain))
      expect(canonicalJson(shared)).toBe(canonicalJson(plain))
      expect(scopeSlot(shared)).toBeTypeOf('object')
      expect(scopeSlot(plain)).toBeUndefined()
      const copy = cloneRecord({ id: 'mem_1', scope: shared } as unknown as MemoryRecord).scope
      expect(copy).toEqual(plain)
      expect(Object.getOwnPropertySymbols(copy)).toEqual([])
      expect(scopeSlot(copy)).toBeUndefined()
    }))
  })

  it('gives one frozen copy per distinct scope, equal to validateScope\'s copy, whatever the field order and however the scopes nest (a scope whose fields are a prefix of another\'s)', () => {
    const scope = fc.uniqueArray(fc.constantFrom(...MEMORY_SCOPE_FIELDS), { minLength: 1, maxLength: 4 })
      .chain(fields => fc.tuple(fc.constant(fields), fc.array(fc.constantFrom('a', 'b', 'c d'), { minLength: fields.length, maxLength: fields.length })))
      .map(([fields, values]) => Object.fromEntries(fields.map((field, at) => [field, values[at]!])) as MemoryScope)
    fc.assert(fc.property(fc.array(scope, { minLength: 1, maxLength: 12 }), (scopes) => {
      const shared = scopes.map(value => sharedScope(value))
      scopes.forEach((value, at) => {
        expect(shared[at]).toEqual(validateScope(value))
        expect(Object.isFrozen(shared[at])).toBe(true)
        // The same fields in reverse order: the same copy.
        expect(sharedScope(Object.fromEntries(Object.entries(value).reverse()))).toBe(shared[at])
        scopes.forEach((other, to) => expect(shared[at] === shared[to]).toBe(scopeKey(value) === scopeKey(other)))
      })
    }), { numRuns: 200 })
  })
})

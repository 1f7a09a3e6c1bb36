/**
 * Memory scopes: validation, exact equality and a canonical key.
 *
 * Source: capability document, "Each store requires an adapter and a scope with at least one
 * non-empty field" and "Every operation uses the store scope, so the Agent cannot read or write
 * records in another scope". A store sees exactly the records of its scope: no subset or prefix
 * matching (fault class 4: a store scoped `{ agent }` must never read every user's records).
 */
import { agentError } from '../errors.ts'
import { MEMORY_SCOPE_FIELDS, type MemoryScope } from './types.ts'

const FIELDS: ReadonlySet<string> = new Set(MEMORY_SCOPE_FIELDS)

/**
 * Checks that `scope` is a valid resolved scope and returns it unchanged.
 *
 * Rules, in order:
 * - not a plain object, a field outside `MEMORY_SCOPE_FIELDS`, or a value that is not a string
 *   (an explicit `undefined` included, so `user: undefined` never silently widens a scope):
 *   `MEMORY_SCOPE_INVALID`;
 * - no field with a non-empty value: `MEMORY_SCOPE_REQUIRED`;
 * - a field whose value is the empty string next to non-empty ones: `MEMORY_SCOPE_INVALID` (an
 *   empty id is almost always an unresolved one; omit the field instead).
 *
 * @throws AgentError `MEMORY_SCOPE_INVALID` or `MEMORY_SCOPE_REQUIRED` with `details.scope`.
 */
export function validateScope(scope: unknown): MemoryScope {
  if (scope === null || typeof scope !== 'object' || Array.isArray(scope)) {
    throw agentError('MEMORY_SCOPE_INVALID', `a memory scope must be an object of string fields, got ${describe(scope)}`, `give an object such as { agent: 'support' } with fields from: ${MEMORY_SCOPE_FIELDS.join(', ')}`)
  }
  const entries = Object.entries(scope)
  for (const [field, value] of entries) {
    if (!FIELDS.has(field)) {
      throw agentError('MEMORY_SCOPE_INVALID', `the memory scope has an unknown field "${field}"`, `use only the fields ${MEMORY_SCOPE_FIELDS.join(', ')}`, { field })
    }
    if (typeof value !== 'string') {
      throw agentError('MEMORY_SCOPE_INVALID', `the memory scope field "${field}" is ${describe(value)}, not a string`, `resolve "${field}" to a string id, or leave the field out (a scope function may return undefined to switch the store off)`, { field })
    }
  }
  if (!entries.some(([, value]) => value !== '')) {
    throw agentError('MEMORY_SCOPE_REQUIRED', 'the memory scope has no field with a non-empty value', `give at least one non-empty field, for example { agent: 'support' }`)
  }
  const empty = entries.find(([, value]) => value === '')
  if (empty) {
    throw agentError('MEMORY_SCOPE_INVALID', `the memory scope field "${empty[0]}" is an empty string`, `resolve "${empty[0]}" to a non-empty id, or leave the field out`, { field: empty[0] })
  }
  return scope as MemoryScope
}

/**
 * A canonical string for a valid scope: the JSON of its `[field, value]` pairs sorted by field,
 * for example `[["agent","support"],["user","u:1"]]`. JSON string escaping makes it
 * collision-free: separators (`:`, `,`, `"`), empty strings and any unicode in values cannot make
 * two different scopes share a key. Values are compared as given (no unicode normalization), so
 * two spellings of one name are two scopes. Not for use as a storage key as is (it holds `:`).
 *
 * @throws AgentError from {@link validateScope} when `scope` is not valid.
 */
export function scopeKey(scope: MemoryScope): string {
  validateScope(scope)
  const pairs = Object.entries(scope).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
  return JSON.stringify(pairs)
}

/**
 * Exact scope equality: the same set of own fields (a field set to `undefined` counts as
 * present) with identical string values. `{ agent: 'a' }` and `{ agent: 'a', user: 'u' }` are
 * different scopes in both directions.
 */
export function sameScope(a: MemoryScope, b: MemoryScope): boolean {
  const aFields = Object.keys(a)
  const bFields = Object.keys(b)
  if (aFields.length !== bFields.length) return false
  return aFields.every(field => Object.prototype.hasOwnProperty.call(b, field) && a[field as keyof MemoryScope] === b[field as keyof MemoryScope])
}

function describe(value: unknown): string {
  if (value === null || value === undefined) return String(value)
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`
}

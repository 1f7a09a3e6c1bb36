/**
 * Memory scopes: validation, exact equality and a canonical key.
 *
 * Source: capability document, "Each store requires an adapter and a scope with at least one
 * non-empty field" and "Every operation uses the store scope, so the Agent cannot read or write
 * records in another scope". A store sees exactly the records of its scope: no subset or prefix
 * matching (fault class 4: a store scoped `{ agent }` must never read every user's records).
 */
import { agentError } from '../errors.ts'
import { withCanonicalJson } from '../log/canonical-json.ts'
import { MEMORY_SCOPE_FIELDS, type MemoryScope } from './types.ts'

const FIELDS: ReadonlySet<string> = new Set(MEMORY_SCOPE_FIELDS)

/**
 * Checks a resolved scope (static, or returned by a scope function) and returns a copy holding
 * only its fields, in the order of `MEMORY_SCOPE_FIELDS`. The one scope check of the package:
 * options, the capability, the stores and the CLI all use it.
 *
 * Rules (fault class "Scope dropped or defaulted": a scope is never widened silently):
 * - not a plain object, or a field outside `MEMORY_SCOPE_FIELDS`: `MEMORY_SCOPE_INVALID`;
 * - no field with a non-blank string value: `MEMORY_SCOPE_REQUIRED`;
 * - a present field whose value is not a non-blank string (`undefined`, `null`, a number, `''`,
 *   `'  '`) next to filled fields: `MEMORY_SCOPE_INVALID` naming the field, so that
 *   `{ agent, user: undefined }` never quietly becomes the whole agent's scope.
 *
 * @param store Store name, named in messages and `details.store` when given.
 * @throws AgentError `MEMORY_SCOPE_INVALID` (with `details.field`) or `MEMORY_SCOPE_REQUIRED`.
 */
export function validateScope(value: unknown, store?: string): MemoryScope {
  // The common case, checked without building any message: this runs on every memory operation.
  const valid = validScopeCopy(value)
  if (valid) return valid
  const subject = store === undefined ? 'the memory scope' : `the scope of memory store "${store}"`
  const where = store === undefined ? {} : { store }
  const fields = MEMORY_SCOPE_FIELDS.join(', ')
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw agentError('MEMORY_SCOPE_INVALID', `${subject} must be an object of string fields, got ${describe(value)}`, `give an object such as { agent: 'support' } with fields from: ${fields}`, where)
  }
  const entries = Object.entries(value)
  const unknown = entries.find(([field]) => !FIELDS.has(field))
  if (unknown) {
    throw agentError('MEMORY_SCOPE_INVALID', `${subject} has an unknown field "${unknown[0]}"`, `use only the fields ${fields}`, { field: unknown[0], ...where })
  }
  if (!entries.some(([, field]) => isFilled(field))) {
    throw agentError('MEMORY_SCOPE_REQUIRED', `${subject} has no field with a non-empty value`, `give at least one non-empty field among ${fields}, for example { agent: 'support' } (a scope is never widened to global), or return undefined from a scope function to switch the store off for the run`, where)
  }
  const unfilled = entries.find(([, field]) => !isFilled(field))
  if (unfilled) {
    throw agentError('MEMORY_SCOPE_INVALID', `${subject} field "${unfilled[0]}" is ${typeof unfilled[1] === 'string' ? 'empty' : describe(unfilled[1])}, which would widen the scope`, `resolve "${unfilled[0]}" to a non-empty string id, leave the field out on purpose, or return undefined from a scope function to switch the store off`, { field: unfilled[0], ...where })
  }
  const scope: MemoryScope = {}
  for (const field of MEMORY_SCOPE_FIELDS) {
    const fieldValue = (value as MemoryScope)[field]
    if (fieldValue !== undefined) scope[field] = fieldValue
  }
  return scope
}

/** Whether `value` is a valid scope: a plain object with at least one field, only fields of `MEMORY_SCOPE_FIELDS`, each a non-blank string. */
function isValidScope(value: unknown): value is MemoryScope {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
  let count = 0
  for (const field in value) {
    if (!Object.prototype.hasOwnProperty.call(value, field)) continue
    if (!FIELDS.has(field) || !isFilled((value as Record<string, unknown>)[field])) return false
    count++
  }
  return count > 0
}

/** A copy of `value` in field order when it is a valid scope, else `undefined` (then validateScope says why). */
function validScopeCopy(value: unknown): MemoryScope | undefined {
  if (!isValidScope(value)) return undefined
  const scope: MemoryScope = {}
  for (const field of MEMORY_SCOPE_FIELDS) {
    const fieldValue = (value as MemoryScope)[field]
    if (fieldValue !== undefined) scope[field] = fieldValue
  }
  return scope
}

function isFilled(value: unknown): value is string {
  return typeof value === 'string' && value.trim().length > 0
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
  // Built field by field in sorted order (no entries array, no sort, no copy): this runs several
  // times on every memory operation. The same string as JSON.stringify of the sorted pairs.
  let key = '['
  let fields = 0
  for (const [field, prefix] of KEY_PREFIXES) {
    const value = (scope as Record<string, unknown> | null)?.[field]
    if (value === undefined) continue
    if (!isFilled(value)) return checkedScopeKey(scope)
    key += fields++ === 0 ? prefix : `,${prefix}`
    key += `${quoted(value)}]`
  }
  if (fields === 0 || fields !== ownFieldCount(scope)) return checkedScopeKey(scope)
  return `${key}]`
}

/** `JSON.stringify(value)` of a string, without the call for one that needs no escape (most ids). */
function quoted(value: string): string {
  for (let at = 0; at < value.length; at++) {
    const code = value.charCodeAt(at)
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff)) return JSON.stringify(value)
  }
  return `"${value}"`
}

/** The key of a scope the fast path above did not accept: its error, or (an unusual but valid object) the key of its valid copy. */
function checkedScopeKey(scope: MemoryScope): string {
  return scopeKey(validateScope(scope))
}

/** `["field",` for each scope field, in sorted order (MEMORY_SCOPE_FIELDS is sorted). */
const KEY_PREFIXES: ReadonlyArray<readonly [string, string]> = [...MEMORY_SCOPE_FIELDS].sort().map(field => [field, `[${JSON.stringify(field)},`] as const)

function ownFieldCount(value: unknown): number {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return -1
  let count = 0
  for (const field in value) if (Object.prototype.hasOwnProperty.call(value, field)) count++
  return count
}

/**
 * What is kept with a shared scope, under its own non-enumerable member {@link SCOPE_SLOT} (set by
 * {@link sharedScope}; copies and JSON leave it out): the partition of the store that named it
 * first (records.ts `partitionKey`) and that partition's log access (the store's `servedBy`).
 */
export interface SharedScopeSlot {
  store?: string
  key?: string
  access?: object
}

/** The member of a shared scope holding its {@link SharedScopeSlot}. */
export const SCOPE_SLOT: unique symbol = Symbol('shared scope slot')

/** The slot of a scope {@link sharedScope} made, or `undefined` for any other object. */
export function scopeSlot(scope: MemoryScope): SharedScopeSlot | undefined {
  return (scope as { [SCOPE_SLOT]?: SharedScopeSlot })[SCOPE_SLOT]
}

/** Distinct scopes {@link sharedScope} keeps at once. */
export const SHARED_SCOPES_MAX = 10_000

/**
 * {@link validateScope}'s copy of `value`, as one frozen object per distinct scope: the operations
 * on a scope name the same object, so what is cached per frozen scope (the partition key of
 * `records.ts`) is computed once, not once per operation.
 *
 * @throws AgentError as {@link validateScope}.
 */
export function sharedScope(value: unknown, store?: string): MemoryScope {
  // A scope seen before costs one pass over its fields and a lookup per field: no key text, no copy.
  const known = knownScope(value)
  if (known) return known
  const scope = validateScope(value, store)
  // Its partition keys and log access are kept with it (records.ts), its JSON carried (written with no lookup).
  Object.defineProperty(scope, SCOPE_SLOT, { value: {}, enumerable: false, writable: false, configurable: false })
  const shared = withCanonicalJson(scope)
  if (sharedCount >= SHARED_SCOPES_MAX) {
    sharedRoot = new Map()
    sharedCount = 0
  }
  // The fields of a validated scope are in MEMORY_SCOPE_FIELDS order, which is sorted: the order lookups walk.
  let level = sharedRoot
  let node: ScopeNode | undefined
  for (const field in shared) {
    let byValue = level.get(field)
    if (!byValue) level.set(field, byValue = new Map())
    const fieldValue = shared[field as keyof MemoryScope]!
    node = byValue.get(fieldValue)
    if (!node) byValue.set(fieldValue, node = { scope: undefined, next: undefined })
    level = node.next ??= new Map()
  }
  if (node!.scope === undefined) {
    node!.scope = shared
    sharedCount++
  }
  return node!.scope
}

/** A step of the shared scopes' tree: the scope whose fields end here, and the next field's values. */
interface ScopeNode {
  scope: MemoryScope | undefined
  next: Map<string, Map<string, ScopeNode>> | undefined
}

/** The shared scopes by their fields in sorted order: field name, then value, per level. At most {@link SHARED_SCOPES_MAX} (then it starts again). */
let sharedRoot = new Map<string, Map<string, ScopeNode>>()
let sharedCount = 0

// The own fields of the value {@link knownScope} is looking up, sorted by name (searches are synchronous: one pair of arrays).
const lookupFields: string[] = []
const lookupValues: string[] = []

/** The shared scope of a valid plain-object scope seen before, else `undefined` (the caller validates and adds it). */
function knownScope(value: unknown): MemoryScope | undefined {
  if (value === null || typeof value !== 'object') return undefined
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return undefined
  let count = 0
  for (const field in value) {
    if (!Object.prototype.hasOwnProperty.call(value, field)) continue
    const fieldValue = (value as Record<string, unknown>)[field]
    if (count === MEMORY_SCOPE_FIELDS.length || !FIELDS.has(field) || !isFilled(fieldValue)) return undefined
    // Insertion into the sorted prefix (scopes have a few fields, usually given in sorted order already).
    let at = count++
    while (at > 0 && lookupFields[at - 1]! > field) {
      lookupFields[at] = lookupFields[at - 1]!
      lookupValues[at] = lookupValues[at - 1]!
      at--
    }
    lookupFields[at] = field
    lookupValues[at] = fieldValue
  }
  if (count === 0) return undefined
  let level: Map<string, Map<string, ScopeNode>> | undefined = sharedRoot
  let node: ScopeNode | undefined
  for (let at = 0; at < count; at++) {
    node = level?.get(lookupFields[at]!)?.get(lookupValues[at]!)
    if (!node) return undefined
    level = node.next
  }
  return node!.scope
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

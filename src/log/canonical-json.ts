/**
 * Canonical JSON, the form every log line is written in: keys sorted by UTF-16 code unit order,
 * no whitespace, `JSON.stringify`'s rules otherwise. Two values equal as JSON data give the same
 * text, so a line parsed back re-serializes to exactly what was hashed. Also the one-pass check
 * that a line is already canonical (replay reads every line with it) and the copy of a written
 * value as a replay would parse it back.
 */

/**
 * Serializes `value` as canonical JSON: object keys sorted by UTF-16 code unit order, no
 * whitespace, `undefined` (and functions, symbols) dropped from objects and written as `null` in
 * arrays, `toJSON()` honoured, non-finite numbers written as `null`: the same rules as
 * `JSON.stringify`, except that key order is fixed. Two values that are equal as JSON data give
 * byte-identical text, so a line parsed back from the log re-serializes to what was hashed.
 *
 * @throws TypeError for a `bigint` or a circular structure (as `JSON.stringify` does).
 */
export function canonicalJson(value: unknown): string {
  // Fast path: when every object already lists its keys in sorted order, JSON.stringify writes
  // the canonical form natively (no toJSON and no cycles seen, so the rules are the same).
  if (hasSortedKeys(value, 0)) return JSON.stringify(value) ?? 'null'
  const text = canonicalize(value, new Set())
  // Top-level undefined has no JSON form; callers always pass objects, but keep the contract total.
  return text ?? 'null'
}

/**
 * True when `value` is JSON data (no `toJSON`) whose objects, at every depth, enumerate their keys
 * in sorted order: then `JSON.stringify(value)` is its canonical JSON. False also past a depth of
 * 64 (the slow path reports cycles). Used by replay to check a parsed line cheaply.
 */
export function hasSortedKeys(value: unknown, depth = 0): boolean {
  if (value === null || typeof value !== 'object') return true
  if (depth > 64) return false
  if (Array.isArray(value)) {
    for (const item of value) if (!hasSortedKeys(item, depth + 1)) return false
    return true
  }
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return false
  let last: string | undefined
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) return false
    if (last !== undefined && !(last < key)) return false
    last = key
    if (!hasSortedKeys((value as Record<string, unknown>)[key], depth + 1)) return false
  }
  return true
}

function canonicalize(value: unknown, seen: Set<object>): string | undefined {
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: () => unknown }).toJSON()
  }
  if (value === null) return 'null'
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return JSON.stringify(value)
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null'
    case 'bigint':
      throw new TypeError('canonicalJson cannot serialize a bigint')
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined
  }
  const object = value as object
  if (seen.has(object)) throw new TypeError('canonicalJson cannot serialize a circular structure')
  seen.add(object)
  try {
    if (Array.isArray(object)) {
      // An index loop, not map(): a hole is written `null` (map skips holes and would leave `[1,,2]`).
      const items: string[] = []
      for (let index = 0; index < object.length; index++) items.push(canonicalize(object[index], seen) ?? 'null')
      return `[${items.join(',')}]`
    }
    const parts: string[] = []
    for (const key of Object.keys(object).sort()) {
      const text = canonicalize((object as Record<string, unknown>)[key], seen)
      if (text !== undefined) parts.push(`${JSON.stringify(key)}:${text}`)
    }
    return `{${parts.join(',')}}`
  }
  finally {
    seen.delete(object)
  }
}

/**
 * Checks that `text` (a line JSON.parse accepted as an object) is canonical JSON in one pass,
 * without serializing anything: no whitespace outside strings, keys strictly increasing in
 * UTF-16 order in every object, only the escapes JSON.stringify writes (\" \\ \b \f \n \r \t),
 * numbers as JavaScript writes them. Returns the top-level keys and where each member starts
 * (plus one past the closing brace), `false` when the text is not canonical, or `undefined` when it holds
 * a `\u` escape or an escaped key (the caller then uses the general check).
 */
export function canonicalMembers(text: string): { keys: string[]; starts: number[] } | false | undefined {
  const length = text.length
  if (text.charCodeAt(0) !== 123 || text.charCodeAt(length - 1) !== 125) return false
  const keys: string[] = []
  const starts: number[] = []
  // Per depth: 1 object, 2 array; and the last key seen in each open object.
  const kinds: number[] = [0]
  const lastKeys: Array<string | undefined> = [undefined]
  let depth = 0
  let expectKey = false
  let at = 0
  while (at < length) {
    const code = text.charCodeAt(at)
    if (code === 34) {
      let end = at + 1
      let escaped = false
      for (;;) {
        const inner = text.charCodeAt(end)
        if (inner === 34) break
        if (inner === 92) {
          const next = text.charCodeAt(end + 1)
          if (next === 117) return undefined
          if (next !== 34 && next !== 92 && next !== 98 && next !== 102 && next !== 110 && next !== 114 && next !== 116) return false
          escaped = true
          end += 2
          continue
        }
        if (Number.isNaN(inner)) return false
        end++
      }
      if (expectKey) {
        if (escaped) return undefined
        const key = text.slice(at + 1, end)
        const last = lastKeys[depth]
        if (last !== undefined && !(last < key)) return false
        lastKeys[depth] = key
        if (depth === 1) {
          keys.push(key)
          starts.push(at)
        }
        if (text.charCodeAt(end + 1) !== 58) return false
        expectKey = false
        at = end + 2
        continue
      }
      at = end + 1
      continue
    }
    if (code === 123) {
      depth++
      kinds[depth] = 1
      lastKeys[depth] = undefined
      expectKey = true
      at++
      continue
    }
    if (code === 91) {
      depth++
      kinds[depth] = 2
      at++
      continue
    }
    if (code === 125 || code === 93) {
      expectKey = false
      // One past the closing brace, so that every member ends one character before the next start.
      if (depth === 1 && code === 125) starts.push(at + 1)
      depth--
      at++
      continue
    }
    if (code === 44) {
      if (kinds[depth] === 1) expectKey = true
      at++
      continue
    }
    if (code === 116 || code === 110) {
      at += 4
      continue
    }
    if (code === 102) {
      at += 5
      continue
    }
    if (code === 45 || (code >= 48 && code <= 57)) {
      let end = at + 1
      for (let next = text.charCodeAt(end); (next >= 48 && next <= 57) || next === 46 || next === 101 || next === 69 || next === 43 || next === 45; next = text.charCodeAt(++end));
      const token = text.slice(at, end)
      if (String(Number(token)) !== token) return false
      at = end
      continue
    }
    return false
  }
  return depth === 0 && starts.length === keys.length + 1 ? { keys, starts } : false
}

/** `JSON.parse(json)`, where `json` is the canonical JSON of `value`: a copy of `value` when JSON keeps it as is, else parsed. */
export function asParsed(value: unknown, json: string): unknown {
  const copy = plainJsonCopy(value, 0)
  return copy === NOT_PLAIN ? JSON.parse(json) : copy
}

const NOT_PLAIN = Symbol('not plain JSON')

/**
 * A deep copy of `value` when `JSON.parse` of its canonical JSON would give an equal value with
 * the same key order: strings, booleans, `null`, finite numbers other than -0, dense arrays and
 * plain objects of those whose keys are already in sorted order. Else {@link NOT_PLAIN}.
 */
function plainJsonCopy(value: unknown, depth: number): unknown {
  if (typeof value === 'string' || typeof value === 'boolean' || value === null) return value
  if (typeof value === 'number') return Number.isFinite(value) && !Object.is(value, -0) ? value : NOT_PLAIN
  if (typeof value !== 'object' || depth > 32) return NOT_PLAIN
  if (Array.isArray(value)) {
    const copy: unknown[] = []
    for (let index = 0; index < value.length; index++) {
      if (!(index in value)) return NOT_PLAIN
      const item = plainJsonCopy(value[index], depth + 1)
      if (item === NOT_PLAIN) return NOT_PLAIN
      copy.push(item)
    }
    return copy
  }
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return NOT_PLAIN
  const copy: Record<string, unknown> = {}
  let last: string | undefined
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key) || key === '__proto__') return NOT_PLAIN
    if (last !== undefined && !(last < key)) return NOT_PLAIN
    last = key
    const item = plainJsonCopy((value as Record<string, unknown>)[key], depth + 1)
    if (item === NOT_PLAIN) return NOT_PLAIN
    copy[key] = item
  }
  return copy
}

/** A character `JSON.stringify` writes escaped in a string: `"`, `\\`, a control character, or a UTF-16 surrogate (a lone one is escaped; a pair is not, but is sent to `JSON.stringify` too). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/

/**
 * `JSON.stringify(text)`: the text in quotes as it is when no character of it needs an escape
 * (one regular expression scan costs about half of what the serializer spends on the record
 * texts, ids and digests of a line), else `JSON.stringify`'s own.
 */
export function jsonString(text: string): string {
  return NEEDS_ESCAPE.test(text) ? JSON.stringify(text) : `"${text}"`
}

/** Canonical JSON of one member's value, `undefined` when the member is left out (as JSON.stringify drops it). */
export function memberJson(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return jsonString(value)
    case 'number':
      // What JSON.stringify writes for a number, without its call.
      return Number.isFinite(value) ? String(value) : 'null'
    case 'boolean':
      return value ? 'true' : 'false'
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined
    default:
      return value !== null && Object.isFrozen(value) ? frozenJson(value as object) : canonicalJson(value)
  }
}

/** Canonical JSON of frozen objects of strings (a shared scope): they cannot change, so it is computed once. */
const frozenTexts = new WeakMap<object, string>()

/**
 * The own, non-enumerable member under which a frozen object of strings made to be shared (a
 * shared memory scope) carries its canonical JSON, set before it is frozen: writing it needs no
 * lookup. Only {@link withCanonicalJson} sets it.
 */
export const CANONICAL_JSON: unique symbol = Symbol('canonical JSON')

/**
 * Freezes `value`, a plain object of string members in sorted key order, with its canonical JSON
 * under {@link CANONICAL_JSON}; returns it.
 */
export function withCanonicalJson<T extends object>(value: T): Readonly<T> {
  Object.defineProperty(value, CANONICAL_JSON, { value: canonicalJson(value), enumerable: false, writable: false, configurable: false })
  return Object.freeze(value)
}

/** The canonical JSON `value` carries (see {@link CANONICAL_JSON}), or `undefined`. */
export function carriedJson(value: object): string | undefined {
  return (value as { [CANONICAL_JSON]?: string })[CANONICAL_JSON]
}

function frozenJson(value: object): string {
  const carried = carriedJson(value)
  if (carried !== undefined) return carried
  const known = frozenTexts.get(value)
  if (known !== undefined) return known
  const text = canonicalJson(value)
  let flat = !Array.isArray(value) && typeof (value as { toJSON?: unknown }).toJSON !== 'function'
  for (const key in value) if (typeof (value as Record<string, unknown>)[key] !== 'string') flat = false
  if (flat) frozenTexts.set(value, text)
  return text
}

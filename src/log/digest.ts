/**
 * Canonical JSON and SHA-256 for the memory event log's digest chain.
 *
 * Source: capability document, "Each line has the store name, scope, version, and a digest
 * (SHA-256 when Web Crypto is available)". We hash with `node:crypto` where it exists (about 20x
 * faster than awaiting Web Crypto one line at a time) and fall back to `crypto.subtle` elsewhere.
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

type Hasher = (text: string) => string | Promise<string>

let hasher: Promise<Hasher> | undefined

async function loadHasher(): Promise<Hasher> {
  try {
    const { createHash } = await import('node:crypto')
    if (typeof createHash === 'function') return text => createHash('sha256').update(text, 'utf8').digest('hex')
  }
  catch {
    // Not on Node (edge runtime, browser): use Web Crypto below.
  }
  const subtle = globalThis.crypto?.subtle
  if (!subtle) throw new Error('no SHA-256 implementation: neither node:crypto nor Web Crypto is available')
  return async (text) => {
    const bytes = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(text)))
    let hex = ''
    for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
    return hex
  }
}

let syncHasher: Promise<((text: string) => string) | undefined> | undefined

/**
 * The synchronous SHA-256 of `node:crypto` (`crypto.hash` where it exists, else `createHash`),
 * as a function of text to 64 lowercase hex characters, or `undefined` where only Web Crypto
 * exists (then use {@link sha256Hex}). Replay hashes every line with it: no promise per line.
 */
export function sha256HexSync(): Promise<((text: string) => string) | undefined> {
  syncHasher ??= (async () => {
    try {
      const crypto = await import('node:crypto')
      const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash
      if (typeof oneShot === 'function') return (text: string) => oneShot('sha256', text, 'hex')
      if (typeof crypto.createHash === 'function') return (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex')
    }
    catch {
      // Not on Node.
    }
    return undefined
  })()
  return syncHasher
}

/**
 * SHA-256 of the UTF-8 bytes of `text`, as 64 lowercase hex characters.
 * Uses `node:crypto` `createHash` when available, else Web Crypto `crypto.subtle.digest`.
 *
 * @throws Error when the runtime has neither implementation.
 */
export async function sha256Hex(text: string): Promise<string> {
  hasher ??= loadHasher()
  return (await hasher)(text)
}

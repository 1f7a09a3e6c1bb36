/**
 * Checking one line as a replay reads it: JSON, the chain members (`v`, `seq`, `prev`, `digest`,
 * `payloadDigest`, `more`, `erased`), canonical form, the digests, then the fold's own check of
 * the event members. Two paths give the same answers: a one-pass check of a synchronous hash
 * (the common case) and a general one that rebuilds each object.
 */
import { canonicalJson, canonicalMembers } from './canonical-json.ts'
import { sha256Hex } from './digest.ts'
import { internValue } from './line-writer.ts'
import type { LogEvent, LogEventDraft, LogEventSchema, LogFold } from './types.ts'

/** A line that fails verification: its 1-based number and why. */
export class CorruptLine extends Error {
  constructor(readonly line: number, readonly reason: string) {
    super(`line ${line}: ${reason}`)
  }
}

// Reasons of a line that fails (one string each: no closure per checked line).
const NOT_CANONICAL = 'the line is not in canonical JSON form (it was reformatted after it was written)'
const DIGEST_CHANGED = 'digest does not match the line (it was changed after it was written)'
const PAYLOAD_CHANGED = 'the payload digest does not match the payload (it was changed after it was written)'

/** Parsed values of repeated member texts (audits, empty lists and objects), shared by the events of one read. */
export type Interner = Map<string, unknown>
const INTERNER_MAX = 10_000
/** Longest member text shared through the interner (longer ones rarely repeat). */
const SHARED_MAX_CHARS = 512

/** The `digest` a line claims, read without parsing it (a skipped line still continues the chain). */
export function digestOf(text: string): string | null {
  const match = /"digest":"([0-9a-f]{64})"/.exec(text)
  return match ? match[1]! : null
}

/** Why the chain members of a parsed line are malformed, or `undefined`. */
function chainProblem(schema: LogEventSchema, value: Record<string, unknown>): string | undefined {
  if (value.v !== 1 && value.v !== 2 && value.v !== 3) return `unsupported log format version ${JSON.stringify(value.v)}`
  if (value.v !== 1) {
    // Version 3 writes `payloadDigest` only where the payload is gone (an erased line); a reader computes it otherwise.
    if (value.v === 2 || value.erased === true) {
      if (typeof value.payloadDigest !== 'string') return 'payloadDigest is missing'
    }
    else if (value.payloadDigest !== undefined) return 'a version 3 line holds payloadDigest only once erased'
    if (value.erased !== undefined && value.erased !== true) return 'erased is not true'
    const payload = schema.payloadFields[value.type as string] as readonly string[] | undefined
    if (payload) {
      const unknown = Object.keys(value).find(field => field !== 'digest' && field !== 'erased' && !schema.headerFields.includes(field) && !payload.includes(field))
      // Every member is covered by the digest (header) or the payload digest: no room for unsigned data.
      if (unknown) return `unknown field "${unknown}"`
      if (value.erased && payload.some(field => value[field] !== undefined)) return 'an erased line still holds payload fields'
    }
  }
  else if (value.payloadDigest !== undefined || value.erased !== undefined || value.type === schema.eraseType) return 'a version 1 line has version 2 fields'
  if (!Number.isSafeInteger(value.seq) || (value.seq as number) < 1) return 'seq is not a positive integer'
  if (value.prev !== null && typeof value.prev !== 'string') return 'prev is not a digest or null'
  if (typeof value.digest !== 'string') return 'digest is missing'
  if (value.more !== undefined && value.more !== true) return 'more is not true'
  return undefined
}

/**
 * A parsed line's event, or why it is malformed: the chain members' shape and the fold's checks
 * of the event members (not the digests, `seq` order nor `prev`, which need the lines before it).
 */
export function parseEventLine<Draft extends LogEventDraft>(fold: LogFold<any, Draft, any>, value: unknown): LogEvent<Draft> | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return 'the line is not a JSON object'
  const members = value as Record<string, unknown>
  const problem = chainProblem(fold.schema, members)
  if (problem) return problem
  restoreDefaults(fold.schema, members)
  return fold.parse(members, members.erased === true)
}

/** Puts back the payload members a version 3 line left out because they had their default value. */
function restoreDefaults(schema: LogEventSchema, members: Record<string, unknown>): void {
  if (members.v !== 3 || members.erased === true || (!schema.payloadDefaults && !schema.payloadSameAs)) return
  for (const field of schema.payloadFields[members.type as string] ?? []) {
    if (members[field] !== undefined) continue
    const other = schema.payloadSameAs?.[field]
    if (other !== undefined) members[field] = members[other]
    else if (schema.payloadDefaults && field in schema.payloadDefaults) members[field] = schema.payloadDefaults[field]
  }
}

/** The checks every line gets first, on both paths: not empty, JSON, a known event, `seq` and `prev` in order. */
function parseLine<Draft extends LogEventDraft>(fold: LogFold<any, Draft, any>, text: string, line: number, prev: string | null): { value: unknown; event: LogEvent<Draft> } {
  if (text.length === 0 || (text.charCodeAt(0) <= 32 && text.trim() === '')) throw new CorruptLine(line, 'the line is empty')
  let value: unknown
  try {
    value = JSON.parse(text)
  }
  catch {
    throw new CorruptLine(line, 'the line is not valid JSON')
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new CorruptLine(line, 'the line is not a JSON object')
  const members = value as Record<string, unknown>
  const problem = chainProblem(fold.schema, members)
  if (problem) throw new CorruptLine(line, problem)
  restoreDefaults(fold.schema, members)
  const event = fold.parse(members, members.erased === true)
  if (typeof event === 'string') throw new CorruptLine(line, event)
  if (event.seq !== line) throw new CorruptLine(line, `seq is ${event.seq}, expected ${line}`)
  if (event.prev !== prev) throw new CorruptLine(line, 'prev does not match the digest of the previous line (the chain is broken)')
  return { value, event }
}

/** The header members of a version 2 event, as an object (what `digest` covers). */
function headerOf(schema: LogEventSchema, record: Record<string, unknown>): Record<string, unknown> {
  const header: Record<string, unknown> = {}
  for (const field of schema.headerFields) if (record[field] !== undefined) header[field] = record[field]
  return header
}

/** The payload members of an event (those present), as an object (what `payloadDigest` covers). */
export function payloadOf(schema: LogEventSchema, record: Record<string, unknown>): Record<string, unknown> {
  const payload: Record<string, unknown> = {}
  for (const field of schema.payloadFields[record.type as string] ?? []) if (record[field] !== undefined) payload[field] = record[field]
  return payload
}

/** Checks line `line` (after the line whose digest is `prev`) with Web Crypto: canonical form by re-serializing, digests over rebuilt objects. */
export async function checkLine<Draft extends LogEventDraft>(fold: LogFold<any, Draft, any>, text: string, line: number, prev: string | null): Promise<LogEvent<Draft>> {
  const { value, event } = parseLine(fold, text, line, prev)
  const record = event as unknown as Record<string, unknown>
  // Lines are written in canonical form: any other spelling (spaces, key order) was edited by hand.
  if (canonicalJson(event.v === 3 ? storedMembers(text) : value) !== text) throw new CorruptLine(line, NOT_CANONICAL)
  if (event.v === 1) {
    const { digest, ...rest } = record
    if ((await sha256Hex(canonicalJson(rest))) !== digest) throw new CorruptLine(line, DIGEST_CHANGED)
    return event
  }
  if (event.v === 3) {
    const stored = storedMembers(text)
    const payloadDigest = event.erased ? stored.payloadDigest : await sha256Hex(canonicalJson(payloadOf(fold.schema, stored)))
    if ((await sha256Hex(canonicalJson(headerOf(fold.schema, { ...stored, payloadDigest })))) !== event.digest) throw new CorruptLine(line, DIGEST_CHANGED)
    return event
  }
  if ((await sha256Hex(canonicalJson(headerOf(fold.schema, record)))) !== event.digest) throw new CorruptLine(line, DIGEST_CHANGED)
  if (!event.erased && (await sha256Hex(canonicalJson(payloadOf(fold.schema, record)))) !== event.payloadDigest) throw new CorruptLine(line, PAYLOAD_CHANGED)
  return event
}

/**
 * {@link checkLine} with a synchronous hash, without re-serializing the line from scratch: the
 * one-pass scan ({@link canonicalMembers}) checks canonical form and finds each member, and the
 * header and payload texts that the digests cover are joined from those slices. Lines with a
 * `\u` escape or an escaped key take the general path. Same checks, same reasons as
 * {@link checkLine}. Repeated member texts share one parsed value (`interner` for one read,
 * `interned` for the scope member over the open log's life).
 */
export function checkLineSync<Draft extends LogEventDraft>(fold: LogFold<any, Draft, any>, text: string, line: number, prev: string | null, hash: (text: string) => string, interner: Interner, interned: Map<string, unknown>): LogEvent<Draft> {
  const { schema } = fold
  const { value, event } = parseLine(fold, text, line, prev)
  const record = event as unknown as Record<string, unknown>
  const members = canonicalMembers(text)
  if (members === false) throw new CorruptLine(line, NOT_CANONICAL)
  if (members === undefined) {
    if (canonicalJson(event.v === 3 ? storedMembers(text) : value) !== text) throw new CorruptLine(line, NOT_CANONICAL)
    if (event.v === 1) {
      const { digest, ...rest } = record
      if (hash(canonicalJson(rest)) !== digest) throw new CorruptLine(line, DIGEST_CHANGED)
      return event
    }
    if (event.v === 3) {
      const stored = storedMembers(text)
      const payloadDigest = event.erased ? stored.payloadDigest : hash(canonicalJson(payloadOf(schema, stored)))
      if (hash(canonicalJson(headerOf(schema, { ...stored, payloadDigest }))) !== event.digest) throw new CorruptLine(line, DIGEST_CHANGED)
      return event
    }
    if (hash(canonicalJson(headerOf(schema, record))) !== event.digest) throw new CorruptLine(line, DIGEST_CHANGED)
    if (!event.erased && hash(canonicalJson(payloadOf(schema, record))) !== event.payloadDigest) throw new CorruptLine(line, PAYLOAD_CHANGED)
    return event
  }
  const { keys, starts } = members
  const header: string[] = []
  const payload: string[] = []
  const payloadSet = payloadSets(schema)[event.type]
  const headerSet = headerSets(schema)
  // Version 3 (not erased): where the computed `payloadDigest` member goes among the header members (sorted keys).
  const computed = event.v === 3 && !event.erased
  let payloadDigestAt = -1
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!
    if (key === 'digest') continue
    if (event.v === 1 || headerSet.has(key)) {
      if (computed && payloadDigestAt === -1 && key > 'payloadDigest') payloadDigestAt = header.length
      header.push(text.slice(starts[index]!, starts[index + 1]! - 1))
    }
    else if (payloadSet?.has(key)) payload.push(text.slice(starts[index]!, starts[index + 1]! - 1))
  }
  if (computed) header.splice(payloadDigestAt === -1 ? header.length : payloadDigestAt, 0, `"payloadDigest":"${hash(`{${payload.join(',')}}`)}"`)
  if (hash(`{${header.join(',')}}`) !== event.digest) throw new CorruptLine(line, DIGEST_CHANGED)
  if (event.v === 2 && !event.erased && hash(`{${payload.join(',')}}`) !== event.payloadDigest) throw new CorruptLine(line, PAYLOAD_CHANGED)
  if (interner.size > INTERNER_MAX) interner.clear()
  const internedPrefix = schema.internedField.length + 3
  for (let index = 0; index < keys.length; index++) {
    const key = keys[index]!
    if (key === schema.internedField) {
      // The piece is the member (`"scope":{...}`); interned values are keyed by the value's JSON.
      record[key] = internValue(interned, text.slice(starts[index]! + internedPrefix, starts[index + 1]! - 1), record[key])
      continue
    }
    if (!schema.sharedFields.has(key)) continue
    const piece = text.slice(starts[index]!, starts[index + 1]! - 1)
    if (piece.length > SHARED_MAX_CHARS) continue
    const known = interner.get(piece)
    if (known !== undefined) record[key] = known
    else interner.set(piece, record[key])
  }
  return event
}

/** The members of a line as written (before left-out defaults are put back). */
function storedMembers(text: string): Record<string, unknown> {
  return JSON.parse(text) as Record<string, unknown>
}

const headerSetCache = new WeakMap<LogEventSchema, ReadonlySet<string>>()
const payloadSetCache = new WeakMap<LogEventSchema, Record<string, ReadonlySet<string>>>()

function headerSets(schema: LogEventSchema): ReadonlySet<string> {
  let set = headerSetCache.get(schema)
  if (!set) headerSetCache.set(schema, set = new Set(schema.headerFields))
  return set
}

function payloadSets(schema: LogEventSchema): Record<string, ReadonlySet<string>> {
  let sets = payloadSetCache.get(schema)
  if (!sets) payloadSetCache.set(schema, sets = Object.fromEntries(Object.entries(schema.payloadFields).map(([type, fields]) => [type, new Set(fields)])))
  return sets
}

/**
 * Writing one event as a version 3 line: header members and `payloadDigest` under `digest`,
 * payload members beside them, every member in canonical JSON and canonical (sorted) order; the
 * line leaves out `payloadDigest` (a reader computes it from the payload) and the payload members
 * that have their default value ({@link LogEventSchema.payloadDefaults}, `payloadSameAs`), which
 * neither digest then covers (format: docs/log-format.md). The event handed back is the line as
 * a replay parses it, so live state and a replay fold the same values.
 */
import { asParsed, canonicalJson, carriedJson, jsonString, memberJson } from './canonical-json.ts'
import type { LineHash } from './digest.ts'
import type { LogEventDraft, LogEventSchema } from './types.ts'

/**
 * The members of a version 2 line of one event type in canonical (sorted) order, each with its
 * part: the header (covered by `digest`), the payload (covered by `payloadDigest`), or one of
 * the two digests (`payloadDigest` is itself a header member).
 */
interface LineLayout {
  fields: readonly string[]
  /** `"field":` of each member. */
  prefixes: readonly string[]
  parts: ReadonlyArray<'header' | 'payload' | 'payloadDigest' | 'digest'>
  /** Per member, the canonical JSON of its default value (left out of the line), if it has one. */
  defaults: ReadonlyArray<string | undefined>
  /** Per member with a default, that default ({@link LogEventSchema.payloadDefaults}): what a replay puts back, shared. */
  defaultValues: ReadonlyArray<unknown>
  /** Per member, the member whose value it takes when left out, if any. */
  sameAs: ReadonlyArray<string | undefined>
  /** Per member, whether it is a chain member the writer gives (`v`, `seq`, `prev`, `more`), not the draft. */
  chain: readonly boolean[]
  /** Per header member, its last short string value and that value's JSON (a string is immutable, so equal values have equal JSON). */
  lastJson: Array<{ value: string; json: string } | undefined>
}

const layouts = new WeakMap<LogEventSchema, Record<string, LineLayout>>()

function layoutsOf(schema: LogEventSchema): Record<string, LineLayout> {
  let known = layouts.get(schema)
  if (known) return known
  known = Object.fromEntries(Object.entries(schema.payloadFields).map(([type, payloadFields]) => {
    const fields = [...schema.headerFields, ...payloadFields, 'digest'].sort()
    const parts = fields.map(field => (field === 'digest' || field === 'payloadDigest' ? field : schema.headerFields.includes(field) ? 'header' : 'payload'))
    const defaults = fields.map((field, index) => (parts[index] === 'payload' && schema.payloadDefaults && field in schema.payloadDefaults ? canonicalJson(schema.payloadDefaults[field]) : undefined))
    const sameAs = fields.map((field, index) => (parts[index] === 'payload' ? schema.payloadSameAs?.[field] : undefined))
    const defaultValues = fields.map((field, index) => (defaults[index] !== undefined ? schema.payloadDefaults![field] : undefined))
    const chain = fields.map(field => field === 'v' || field === 'seq' || field === 'prev' || field === 'more')
    return [type, { fields, prefixes: fields.map(field => `${JSON.stringify(field)}:`), parts, defaults, defaultValues, sameAs, chain, lastJson: fields.map(() => undefined) }]
  })) as Record<string, LineLayout>
  layouts.set(schema, known)
  return known
}

/** The format version of the lines this writer writes. */
export const LINE_VERSION = 3

/** Interned values of one open log kept at most (then the map starts again). */
export const INTERNED_MAX = 10_000

/** A draft written as a line: its text, its digest, and the draft as a replay folds it from the line. */
export interface SerializedEvent<Draft> {
  line: string
  digest: string
  folded: Draft
}

/**
 * Writes `draft` as line `seq` after the line whose digest is `prev`, in format `version` (3;
 * 2 for stores that keep version 2 lines). One pass over the members in canonical order writes
 * each member once in canonical JSON and appends it to the texts it belongs to: the payload
 * text, the header text before and after `payloadDigest`, and the line before and after
 * `digest` (and, version 2, after `payloadDigest`), so each text is exactly `canonicalJson` of
 * its object and only the two digests are joined in afterwards. The same pass makes the draft
 * as a replay folds it; its interned member (the scope) is shared (frozen) with earlier events
 * through `interned`.
 */
export function serializeEvent<Draft extends LogEventDraft>(schema: LogEventSchema, draft: Draft, seq: number, prev: string | null, more: boolean, hash: LineHash, interned?: Map<string, unknown>, version: 2 | 3 = LINE_VERSION): SerializedEvent<Draft> | Promise<SerializedEvent<Draft>> {
  const source = (schema.lineDraft ? schema.lineDraft(draft) : draft) as Draft & Record<string, unknown>
  const layout = layoutsOf(schema)[draft.type]!
  const { fields, prefixes, parts, defaults, defaultValues, sameAs, chain, lastJson } = layout
  let payload = ''
  let headerHead = ''
  let headerTail = ''
  let lineHead = ''
  let lineMiddle = ''
  let lineTail = ''
  // Each member's value as JSON gives it back: the draft's own when JSON keeps it (copied),
  // else its text parsed; a member the line leaves out is undefined; one left out as its
  // default is that default, shared, as a replay puts it back (fewer objects kept per record).
  const folded: Record<string, unknown> = { ...source }
  // Where the pass is: before `digest`, between it and `payloadDigest`, or after both.
  let stage = 0
  for (let index = 0; index < fields.length; index++) {
    const part = parts[index]
    if (part === 'digest' || part === 'payloadDigest') {
      stage++
      continue
    }
    const field = fields[index]!
    const isChain = chain[index]
    const value = isChain ? (field === 'v' ? version : field === 'seq' ? seq : field === 'prev' ? prev : (more || undefined)) : source[field]
    if (value === undefined) continue
    const leftOut = version === 3 && part === 'payload'
    // The common defaults (an empty list or object, false) and a member equal to another are seen without serializing them.
    if (leftOut && ((defaults[index] !== undefined && isPlainDefault(value, defaults[index]!)) || (sameAs[index] !== undefined && value === source[sameAs[index]!]))) {
      if (defaultValues[index] !== undefined) folded[field] = defaultValues[index]
      continue
    }
    let json: string | undefined
    // A short header text repeats from line to line (type, store, the instant within a millisecond): its JSON is kept.
    if (typeof value === 'string' && part === 'header' && value.length <= MEMO_MAX) {
      const memo = lastJson[index]
      if (memo !== undefined && memo.value === value) json = memo.json
      else lastJson[index] = { value, json: json = jsonString(value) }
    }
    else json = memberJson(value)
    if (json === undefined) {
      if (!isChain || field in source) folded[field] = undefined
      continue
    }
    if (leftOut && json === defaults[index]) {
      if (defaultValues[index] !== undefined) folded[field] = defaultValues[index]
      continue
    }
    const member = prefixes[index]! + json
    if (part === 'payload') payload = payload === '' ? member : `${payload},${member}`
    else if (stage < 2) headerHead = headerHead === '' ? member : `${headerHead},${member}`
    else headerTail += `,${member}`
    if (stage === 0) lineHead = lineHead === '' ? member : `${lineHead},${member}`
    else if (stage === 1) lineMiddle += `,${member}`
    else lineTail += `,${member}`
    if (isChain && !(field in source)) continue
    if (typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && json !== 'null' && !Object.is(value, -0))) continue
    // A value made to be shared (it carries its JSON: a shared scope) is the folded value itself.
    folded[field] = field === schema.internedField && interned ? (typeof value === 'object' && value !== null && carriedJson(value) === json ? value : internValue(interned, json, value)) : asParsed(value, json)
  }
  const texts: LineTexts = { headerHead, headerTail, lineHead, lineMiddle, lineTail }
  const payloadDigest = hash(`{${payload}}`)
  if (payloadDigest instanceof Promise) return payloadDigest.then(digest => withPayloadDigest(texts, folded as Draft, digest, hash, version))
  return withPayloadDigest(texts, folded as Draft, payloadDigest, hash, version)
}

/** Whether `value` has the default whose canonical JSON is `json`, for the defaults seen without serializing (`[]`, `{}`, `false`); `false` also when unsure (the caller then compares JSON). */
function isPlainDefault(value: unknown, json: string): boolean {
  if (json === '[]') return Array.isArray(value) && value.length === 0
  if (json === '{}') {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return false
    const prototype = Object.getPrototypeOf(value)
    if (prototype !== Object.prototype && prototype !== null) return false
    for (const key in value) if (Object.prototype.hasOwnProperty.call(value, key)) return false
    return true
  }
  if (json === 'false') return value === false
  return false
}

/** Header strings this long at most have their JSON kept per member ({@link LineLayout.lastJson}). */
const MEMO_MAX = 40

/** The header and line texts around the digests, as the pass over the members leaves them (members joined by commas; the tails start with one). */
interface LineTexts {
  headerHead: string
  headerTail: string
  lineHead: string
  lineMiddle: string
  lineTail: string
}

/** The header text (with `payloadDigest`) hashed into `digest`, then the line. */
function withPayloadDigest<Draft extends LogEventDraft>(texts: LineTexts, folded: Draft, payloadDigest: string, hash: LineHash, version: 2 | 3): SerializedEvent<Draft> | Promise<SerializedEvent<Draft>> {
  const member = `"payloadDigest":"${payloadDigest}"`
  const digest = hash(`{${texts.headerHead === '' ? member : `${texts.headerHead},${member}`}${texts.headerTail}}`)
  if (digest instanceof Promise) return digest.then(known => lineOf(texts, folded, payloadDigest, known, version))
  return lineOf(texts, folded, payloadDigest, digest, version)
}

/** The line of the texts with `digest` (`payloadDigest` is in the header text the digest covers, not in a version 3 line). */
function lineOf<Draft extends LogEventDraft>(texts: LineTexts, folded: Draft, payloadDigest: string, digest: string, version: 2 | 3): SerializedEvent<Draft> {
  const member = `"digest":"${digest}"`
  const line = `{${texts.lineHead === '' ? member : `${texts.lineHead},${member}`}${texts.lineMiddle}${version === 2 ? `,"payloadDigest":"${payloadDigest}"` : ''}${texts.lineTail}}`
  return { line, digest, folded }
}

/** The frozen value shared by the events whose interned member has the canonical JSON `json`. */
export function internValue(interned: Map<string, unknown>, json: string, value: unknown): unknown {
  const known = interned.get(json)
  if (known) return known
  // A frozen object of strings (a shared scope) cannot change: it is shared as it is.
  const shared = isFrozenFlat(value) ? value : Object.freeze(asParsed(value, json))
  if (interned.size >= INTERNED_MAX) interned.clear()
  // A key of our own: `json` may be a slice of a whole read's text, which a kept key would keep alive.
  interned.set(canonicalJson(shared), shared)
  return shared
}

/** Whether `value` is a frozen plain object whose members are all strings (then no copy of it can differ from it). */
function isFrozenFlat(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || !Object.isFrozen(value) || Array.isArray(value)) return false
  const prototype = Object.getPrototypeOf(value)
  if (prototype !== Object.prototype && prototype !== null) return false
  let last: string | undefined
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key) || key === '__proto__' || typeof (value as Record<string, unknown>)[key] !== 'string') return false
    // Sorted keys: a replay's parse of its JSON has this key order too.
    if (last !== undefined && !(last < key)) return false
    last = key
  }
  return true
}

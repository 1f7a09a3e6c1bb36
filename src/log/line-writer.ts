/**
 * Writing one event as a version 3 line: header members and `payloadDigest` under `digest`,
 * payload members beside them, every member in canonical JSON and canonical (sorted) order; the
 * line leaves out `payloadDigest` (a reader computes it from the payload) and the payload members
 * that have their default value ({@link LogEventSchema.payloadDefaults}, `payloadSameAs`), which
 * neither digest then covers (format: docs/log-format.md). The event handed back is the line as
 * a replay parses it, so live state and a replay fold the same values.
 */
import { asParsed, canonicalJson, memberJson } from './canonical-json.ts'
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
    return [type, { fields, prefixes: fields.map(field => `${JSON.stringify(field)}:`), parts, defaults, defaultValues, sameAs }]
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
 * 2 for stores that keep version 2 lines). Each member is written once
 * in canonical JSON; the payload text, the header text and the line are joined from those pieces
 * (so each is exactly `canonicalJson` of its object). The interned member (the scope) of the
 * folded event is shared (frozen) with earlier events through `interned`.
 */
export function serializeEvent<Draft extends LogEventDraft>(schema: LogEventSchema, draft: Draft, seq: number, prev: string | null, more: boolean, hash: LineHash, interned?: Map<string, unknown>, version: 2 | 3 = LINE_VERSION): SerializedEvent<Draft> | Promise<SerializedEvent<Draft>> {
  const source = draft as Draft & Record<string, unknown>
  const layout = layoutsOf(schema)[draft.type]!
  const { fields, prefixes, parts, defaults, sameAs } = layout
  const pieces: Array<string | undefined> = new Array(fields.length)
  // Members left out because they have their default value (or equal another member).
  const defaulted: boolean[] = new Array(fields.length)
  let payload = ''
  for (let index = 0; index < fields.length; index++) {
    const part = parts[index]
    if (part !== 'header' && part !== 'payload') continue
    const field = fields[index]!
    const value = field === 'v' ? version : field === 'seq' ? seq : field === 'prev' ? prev : field === 'more' ? (more || undefined) : source[field]
    if (value === undefined) continue
    const leftOut = version === 3 && part === 'payload'
    // The common defaults (an empty list or object, false) and a member equal to another are seen without serializing them.
    if (leftOut && ((defaults[index] !== undefined && isPlainDefault(value, defaults[index]!)) || (sameAs[index] !== undefined && value === source[sameAs[index]!]))) {
      defaulted[index] = true
      continue
    }
    const json = memberJson(value)
    if (leftOut && json !== undefined && json === defaults[index]) {
      defaulted[index] = true
      continue
    }
    pieces[index] = json
    if (json !== undefined && part === 'payload') payload += `${payload === '' ? '' : ','}${prefixes[index]}${json}`
  }
  const payloadDigest = hash(`{${payload}}`)
  if (payloadDigest instanceof Promise) return payloadDigest.then(digest => withPayloadDigest(layout, source, pieces, defaulted, digest, hash, schema, interned, version))
  return withPayloadDigest(layout, source, pieces, defaulted, payloadDigest, hash, schema, interned, version)
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

/** The header text (with `payloadDigest`) hashed into `digest`, then the line. */
function withPayloadDigest<Draft extends LogEventDraft>(layout: LineLayout, source: Draft & Record<string, unknown>, pieces: Array<string | undefined>, defaulted: boolean[], payloadDigest: string, hash: LineHash, schema: LogEventSchema, interned: Map<string, unknown> | undefined, version: 2 | 3): SerializedEvent<Draft> | Promise<SerializedEvent<Draft>> {
  const { fields, prefixes, parts } = layout
  let header = ''
  for (let index = 0; index < fields.length; index++) {
    if (parts[index] === 'payloadDigest') pieces[index] = `"${payloadDigest}"`
    else if (parts[index] !== 'header' || pieces[index] === undefined) continue
    header += `${header === '' ? '' : ','}${prefixes[index]}${pieces[index]}`
  }
  const digest = hash(`{${header}}`)
  if (digest instanceof Promise) return digest.then(known => lineOf(layout, source, pieces, defaulted, known, schema, interned, version))
  return lineOf(layout, source, pieces, defaulted, digest, schema, interned, version)
}

/** The line of the pieces with `digest`, and the draft as a replay folds it from that line. */
function lineOf<Draft extends LogEventDraft>(layout: LineLayout, source: Draft & Record<string, unknown>, pieces: Array<string | undefined>, defaulted: boolean[], digest: string, schema: LogEventSchema, interned: Map<string, unknown> | undefined, version: 2 | 3): SerializedEvent<Draft> {
  const { fields, prefixes, parts, defaultValues } = layout
  let line = ''
  // Each member's value as JSON gives it back: the draft's own when JSON keeps it (copied),
  // else its piece parsed; a member the line leaves out is undefined; one left out as its
  // default is that default, shared, as a replay puts it back (fewer objects kept per record).
  const folded: Record<string, unknown> = { ...source }
  for (let index = 0; index < fields.length; index++) {
    if (parts[index] === 'digest') pieces[index] = `"${digest}"`
    const piece = pieces[index]
    const field = fields[index]!
    // `payloadDigest` is in the header text the digest covers, not in the line.
    if (piece !== undefined && (version === 2 || parts[index] !== 'payloadDigest')) line += `${line === '' ? '' : ','}${prefixes[index]}${piece}`
    if (defaulted[index]) {
      if (defaultValues[index] !== undefined) folded[field] = defaultValues[index]
      continue
    }
    if (!(field in source)) continue
    if (piece === undefined) {
      folded[field] = undefined
      continue
    }
    const value = source[field]
    if (typeof value === 'string' || typeof value === 'boolean') continue
    if (field === schema.internedField && interned) {
      folded[field] = internValue(interned, piece, value)
      continue
    }
    folded[field] = asParsed(value, piece)
  }
  return { line: `{${line}}`, digest, folded: folded as Draft }
}

/** The frozen value shared by the events whose interned member has the canonical JSON `json`. */
export function internValue(interned: Map<string, unknown>, json: string, value: unknown): unknown {
  const known = interned.get(json)
  if (known) return known
  const shared = Object.freeze(asParsed(value, json))
  if (interned.size >= INTERNED_MAX) interned.clear()
  // A key of our own: `json` may be a slice of a whole read's text, which a kept key would keep alive.
  interned.set(canonicalJson(shared), shared)
  return shared
}

import { createHash } from 'node:crypto'
import { deflateRawSync, inflateRawSync } from 'node:zlib'

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

type Entry = [string, number, number, number, string] | [string, number, number, number, string, number]

/** The stamp, directory and section lines of a checkpoint text of version 3 to 6. */
function parts(text: string) {
  const [stampLine, directoryLine, ...rest] = text.split('\n')
  return { stamp: JSON.parse(stampLine!) as Record<string, unknown>, directory: JSON.parse(directoryLine!) as { partitions: Entry[] }, sections: rest.slice(0, -1) }
}

/** Unsigned LEB128 varints and zigzag signed ones (docs/log-format.md, "Checkpoints"), written apart from the codec. */
function varint(out: number[], value: number): void {
  while (value >= 0x80) {
    out.push((value % 0x80) | 0x80)
    value = Math.floor(value / 0x80)
  }
  out.push(value)
}
function readVarint(bytes: Uint8Array, at: { at: number }): number {
  let value = 0
  let scale = 1
  for (;;) {
    const byte = bytes[at.at++]!
    value += (byte & 0x7f) * scale
    if (byte < 0x80) return value
    scale *= 0x80
  }
}
const zigzag = (value: number) => (value >= 0 ? value * 2 : -value * 2 - 1)
const unzigzag = (value: number) => (value % 2 === 0 ? value / 2 : -(value + 1) / 2)

interface SnapshotJson { format: string; slots: number; nextPosition: number; terms: string[]; runs: string[]; surfaces: string[]; data: string }
interface SectionJson { values: unknown; records: Array<Record<string, unknown>>; order: number[]; index: SnapshotJson | null }

interface ColumnsJson { keys: string[]; shapes: number[][]; shape?: number[]; columns: Array<unknown[] | { all: unknown }> }

/** The records of a version 6 section's columns (docs/log-format.md), read apart from the codec. */
function recordsOf(columns: ColumnsJson, count: number): Array<Record<string, unknown>> {
  const taken = columns.keys.map(() => 0)
  return Array.from({ length: count }, (_, at) => Object.fromEntries(columns.shapes[columns.shape?.[at] ?? 0]!.map((key) => {
    const column = columns.columns[key]!
    return [columns.keys[key]!, Array.isArray(column) ? column[taken[key]!++] : column.all]
  })))
}

/** The JSON a version 4 section holds, of a version 5 or 6 section's payload (bytes once inflated) of `count` records. */
function sectionJson(payload: Uint8Array, count: number): string {
  const at = { at: 0 }
  const length = readVarint(payload, at)
  const body = JSON.parse(Buffer.from(payload.subarray(at.at, at.at + length)).toString('utf8')) as { values: unknown; records: Array<Record<string, unknown>> | ColumnsJson; index: (Omit<SnapshotJson, 'terms' | 'runs' | 'surfaces' | 'data'> & { words: string[]; terms: number; runs: number; surfaces: number }) | null }
  if (!Array.isArray(body.records)) body.records = recordsOf(body.records, count)
  at.at += length
  let rank = 0
  const order = (body.records as Array<Record<string, unknown>>).map(() => (rank += unzigzag(readVarint(payload, at))))
  for (const record of body.records as Array<Record<string, unknown>>) if (record.updatedAt === 0) record.updatedAt = record.createdAt
  let index: SnapshotJson | null = null
  if (body.index) {
    const { words, format, slots, nextPosition } = body.index
    const list = (count: number) => Array.from({ length: count }, () => words[readVarint(payload, at)]!)
    const terms = list(body.index.terms)
    const runs = list(body.index.runs)
    index = { format, slots, nextPosition, terms, runs, surfaces: words.slice(0, body.index.surfaces), data: Buffer.from(payload.subarray(at.at)).toString('base64') }
  }
  return JSON.stringify({ values: body.values, records: body.records, order, index })
}

/** The version 5 payload of a section's JSON (as {@link sectionJson} gives it): its records a list, as a version 6 checkpoint may also hold them. */
function sectionPayload(json: string): Buffer {
  const body = JSON.parse(json) as SectionJson
  const tail: number[] = []
  let previous = 0
  for (const rank of body.order) {
    varint(tail, zigzag(rank - previous))
    previous = rank
  }
  for (const record of body.records) if (record.updatedAt === record.createdAt) record.updatedAt = 0
  let index: Record<string, unknown> | null = null
  let data = Buffer.alloc(0)
  if (body.index) {
    const words = [...body.index.surfaces]
    const numberOf = (word: string) => {
      const at = words.indexOf(word)
      if (at !== -1) return at
      words.push(word)
      return words.length - 1
    }
    for (const word of [...body.index.terms, ...body.index.runs]) varint(tail, numberOf(word))
    const { format, slots, nextPosition, terms, runs, surfaces } = body.index
    index = { format, slots, nextPosition, words, terms: terms.length, runs: runs.length, surfaces: surfaces.length }
    data = Buffer.from(body.index.data, 'base64')
  }
  const text = Buffer.from(JSON.stringify({ values: body.values, records: body.records, index }), 'utf8')
  const head: number[] = []
  varint(head, text.length)
  return Buffer.concat([Buffer.from(head), text, Buffer.from(tail), data])
}

/**
 * A checkpoint text with its sections as their JSON (a version 4 checkpoint stores them as
 * base64 of raw DEFLATE; a version 5 or 6 one a packed payload, shown as the JSON version 4 holds),
 * the stamp and directory unchanged: what a test reads and edits before {@link resealCheckpoint}.
 */
export function readableCheckpoint(text: string): string {
  const { stamp, directory, sections } = parts(text)
  if (stamp.v !== 4 && stamp.v !== 5 && stamp.v !== 6) return text
  const lines = text.split('\n')
  const readable = (section: string, at: number) => {
    if (section.startsWith('{')) return section
    const inflated = inflateRawSync(Buffer.from(section, 'base64'))
    return stamp.v === 4 ? inflated.toString('utf8') : sectionJson(inflated, directory.partitions[at]![3])
  }
  return [lines[0], lines[1], ...sections.map(readable), ''].join('\n')
}

/**
 * A version 3, 4 or 5 checkpoint text (sections as stored or as JSON, see {@link readableCheckpoint})
 * with its sections stored again (version 4: compressed; 5: packed and compressed) and their
 * digests, lengths and offsets, its directory's digest and length computed again (after a test
 * edited it), so that it passes every check an open makes: what it then holds is trusted
 * (docs/log-format.md, "Checkpoints").
 */
export function resealCheckpoint(text: string, options: { asStored?: boolean } = {}): string {
  return seal(text, options)
}

/**
 * A version 5 or 6 checkpoint text with the payload of section `at` (0: the first) replaced by what
 * `edit` makes of it (the bytes once inflated), compressed again and sealed as
 * {@link resealCheckpoint} seals (the directory's `inflated` its new length).
 */
export function withSectionPayload(text: string, at: number, edit: (payload: Buffer) => Buffer): string {
  const lines = text.split('\n')
  const payload = edit(inflateRawSync(Buffer.from(lines[2 + at]!, 'base64')))
  lines[2 + at] = deflateRawSync(payload, { level: 1 }).toString('base64')
  return seal(lines.join('\n'), { asStored: true, inflated: { at, bytes: payload.length } })
}

function seal(text: string, options: { asStored?: boolean; inflated?: { at: number; bytes: number } }): string {
  const { stamp, directory, sections } = parts(text)
  const compressed = stamp.v === 4 || stamp.v === 5 || stamp.v === 6
  // `asStored`: the section lines are kept as they are (a damaged compressed section), with their directory's record and inflated counts.
  const json = compressed && !options.asStored ? readableCheckpoint(text).split('\n').slice(2, -1) : sections
  const payloads = compressed && !options.asStored ? json.map(section => (stamp.v === 4 ? Buffer.from(section, 'utf8') : sectionPayload(section))) : []
  const stored = compressed && !options.asStored ? payloads.map(payload => deflateRawSync(payload, { level: 1 }).toString('base64')) : sections
  let at = 0
  directory.partitions = stored.map((section, index) => {
    const bytes = Buffer.byteLength(section, 'utf8')
    const old = directory.partitions[index]!
    const records = options.asStored ? old[3] : (JSON.parse(json[index]!) as { records: unknown[] }).records.length
    const entry: Entry = [old[0], at, bytes, records, sha256(section)]
    if (compressed) entry.push(options.inflated?.at === index ? options.inflated.bytes : options.asStored ? old[5]! : payloads[index]!.length)
    at += bytes + 1
    return entry
  })
  const directoryText = JSON.stringify(directory)
  stamp.directoryDigest = sha256(directoryText)
  stamp.directoryBytes = Buffer.byteLength(directoryText, 'utf8') + 1
  return `${JSON.stringify(stamp)}\n${directoryText}\n${stored.join('\n')}\n`
}

/** A version 6 checkpoint text written as version 5 (each section a packed payload whose records are a list), sealed. */
export function asVersion5(text: string): string {
  const { stamp } = parts(text)
  const lines = readableCheckpoint(text).split('\n')
  stamp.v = 5
  return resealCheckpoint([JSON.stringify(stamp), ...lines.slice(1)].join('\n'))
}

/** A version 4 to 6 checkpoint text written as version 4 (each section its JSON compressed), sealed. */
export function asVersion4(text: string): string {
  const { stamp } = parts(text)
  const lines = readableCheckpoint(text).split('\n')
  stamp.v = 4
  return resealCheckpoint([JSON.stringify(stamp), ...lines.slice(1)].join('\n'))
}

/** A version 4 to 6 checkpoint text written as version 3 (each section its JSON, directory entries of five members), sealed. */
export function asVersion3(text: string): string {
  const { stamp, directory } = parts(text)
  stamp.v = 3
  directory.partitions = directory.partitions.map(entry => entry.slice(0, 5) as Entry)
  const sections = readableCheckpoint(text).split('\n').slice(2)
  return resealCheckpoint([JSON.stringify(stamp), JSON.stringify(directory), ...sections].join('\n'))
}

import { createHash } from 'node:crypto'
import { deflateRawSync, inflateRawSync } from 'node:zlib'

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

type Entry = [string, number, number, number, string] | [string, number, number, number, string, number]

/** The stamp, directory and section lines of a checkpoint text of version 3 or 4. */
function parts(text: string) {
  const [stampLine, directoryLine, ...rest] = text.split('\n')
  return { stamp: JSON.parse(stampLine!) as Record<string, unknown>, directory: JSON.parse(directoryLine!) as { partitions: Entry[] }, sections: rest.slice(0, -1) }
}

/**
 * A checkpoint text with its sections as their JSON (a version 4 checkpoint stores them as
 * base64 of raw DEFLATE), the stamp and directory unchanged: what a test reads and edits before
 * {@link resealCheckpoint}.
 */
export function readableCheckpoint(text: string): string {
  const { stamp, sections } = parts(text)
  if (stamp.v !== 4) return text
  const lines = text.split('\n')
  return [lines[0], lines[1], ...sections.map(section => (section.startsWith('{') ? section : inflateRawSync(Buffer.from(section, 'base64')).toString('utf8'))), ''].join('\n')
}

/**
 * A version 3 or 4 checkpoint text (sections as stored or as JSON, see {@link readableCheckpoint})
 * with its sections stored again (version 4: compressed) and their digests, lengths and offsets,
 * its directory's digest and length computed again (after a test edited it), so that it passes
 * every check an open makes: what it then holds is trusted (docs/log-format.md, "Checkpoints").
 */
export function resealCheckpoint(text: string, options: { asStored?: boolean } = {}): string {
  const { stamp, directory, sections } = parts(text)
  const compressed = stamp.v === 4
  // `asStored`: the section lines are kept as they are (a damaged compressed section), with their directory's record and inflated counts.
  const json = compressed && !options.asStored ? readableCheckpoint(text).split('\n').slice(2, -1) : sections
  const stored = compressed && !options.asStored ? json.map(section => deflateRawSync(section, { level: 1 }).toString('base64')) : sections
  let at = 0
  directory.partitions = stored.map((section, index) => {
    const bytes = Buffer.byteLength(section, 'utf8')
    const old = directory.partitions[index]!
    const records = options.asStored ? old[3] : (JSON.parse(json[index]!) as { records: unknown[] }).records.length
    const entry: Entry = [old[0], at, bytes, records, sha256(section)]
    if (compressed) entry.push(options.asStored ? old[5]! : Buffer.byteLength(json[index]!, 'utf8'))
    at += bytes + 1
    return entry
  })
  const directoryText = JSON.stringify(directory)
  stamp.directoryDigest = sha256(directoryText)
  stamp.directoryBytes = Buffer.byteLength(directoryText, 'utf8') + 1
  return `${JSON.stringify(stamp)}\n${directoryText}\n${stored.join('\n')}\n`
}

/** A version 4 checkpoint text written as version 3 (each section its JSON, directory entries of five members), sealed. */
export function asVersion3(text: string): string {
  const { stamp, directory } = parts(text)
  stamp.v = 3
  directory.partitions = directory.partitions.map(entry => entry.slice(0, 5) as Entry)
  const sections = readableCheckpoint(text).split('\n').slice(2)
  return resealCheckpoint([JSON.stringify(stamp), JSON.stringify(directory), ...sections].join('\n'))
}

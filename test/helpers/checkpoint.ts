import { createHash } from 'node:crypto'

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')

/**
 * A version 3 checkpoint text with its section digests and offsets, its directory's digest and
 * length computed again (after a test edited it), so that it passes every check an open makes:
 * what it then holds is trusted (docs/log-format.md, "Checkpoints").
 */
export function resealCheckpoint(text: string): string {
  const [stampLine, directoryLine, ...rest] = text.split('\n')
  const sections = rest.slice(0, -1)
  const stamp = JSON.parse(stampLine!) as Record<string, unknown>
  const directory = JSON.parse(directoryLine!) as { partitions: Array<[string, number, number, number, string]> }
  let at = 0
  directory.partitions = sections.map((section, index) => {
    const bytes = Buffer.byteLength(section, 'utf8')
    const entry: [string, number, number, number, string] = [directory.partitions[index]![0], at, bytes, (JSON.parse(section) as { records: unknown[] }).records.length, sha256(section)]
    at += bytes + 1
    return entry
  })
  const directoryText = JSON.stringify(directory)
  stamp.directoryDigest = sha256(directoryText)
  stamp.directoryBytes = Buffer.byteLength(directoryText, 'utf8') + 1
  return `${JSON.stringify(stamp)}\n${directoryText}\n${sections.join('\n')}\n`
}

import { randomBytes } from 'node:crypto'

/** A new random id such as `run_4f9c2a0b7d1e6a53c8b2`: `prefix_` + 20 hex characters (80 bits). */
export function randomId(prefix: string): string {
  return `${prefix}_${randomBytes(10).toString('hex')}`
}

/**
 * Encodes a caller-provided id (thread id, approval id) as one workspace key segment.
 * Every character outside `[A-Za-z0-9_-]` becomes `%XX` (UTF-8 bytes), so an id can never add a
 * `:` or `/` separator or a `..` segment to a key. Ids made by {@link randomId} stay unchanged.
 */
export function encodeKeySegment(id: string): string {
  return Array.from(new TextEncoder().encode(id), (byte) => {
    const char = String.fromCharCode(byte)
    return /[A-Za-z0-9_-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`
  }).join('')
}

/**
 * Duplicate detection of memory writes (hosted-memory document, duplicate suppression):
 * remembering content that is already active in the same scope and kind (equal after Unicode
 * normalization, case folding and whitespace collapsing) appends nothing and returns the existing record with
 * `action: 'duplicate'`. Decided before any embedding step, inside the scope only.
 *
 * The log's materialized state answers "which active record of this partition and kind has this
 * content?" (`MemoryRecordState.contentKeys.get(duplicateKey(...))`, records.ts). A partition's
 * map is built lazily, on its first duplicate check, and kept current by `applyEvent` from then
 * on. It holds one number per content ({@link contentKeyHash}, a 53-bit hash of kind and
 * normalized content) with every active record under it, oldest first (a supersede, delete or
 * erase of one of two records of the same content leaves the other found), never the normalized
 * text, so a replay pays nothing for it (in memory or cold-open time). A write looks its key up
 * inside the log's write lock, so the check is O(length of the content) per remember and
 * race-free. This module imports nothing from the log so that records.ts can use it.
 */
import { cyrb53, hash53 } from '../search/hash.ts'

export { hash53 }

/**
 * The comparison form of a record's content: Unicode NFKC, full case folding (lower case of the
 * upper case of the lower case, so `ß` and `SS` fold alike, and `ς` and `σ`), every run of white
 * space (`\s`, which covers Unicode spaces) and format characters (`\p{Cf}`, such as zero-width
 * spaces) collapsed to one space, trimmed.
 *
 * `normalizeContent('  Likes   GREEN tea ')` and `normalizeContent('likes green tea')` are equal.
 */
export function normalizeContent(content: string): string {
  // ASCII: NFKC changes nothing, the case folds are one lower-casing, and no format character occurs.
  if (ASCII.test(content)) {
    const lower = content.toLowerCase()
    // Single spaces between words (most contents): the collapse and the trim would change nothing.
    return ASCII_SPACING.test(lower) ? lower.replace(/\s+/g, ' ').trim() : lower
  }
  return content
    .normalize('NFKC')
    .toLowerCase()
    .toUpperCase()
    .toLowerCase()
    .replace(/[\s\p{Cf}]+/gu, ' ')
    .trim()
}

const ASCII = /^[\x00-\x7f]*$/
/** In ASCII text, white space that the collapse to one space or the trim changes: a space other than U+0020, two in a row, or one at an end. */
const ASCII_SPACING = /[\t\n\v\f\r]| {2}|^ | $/

/**
 * The key of the duplicate map: partition (`partitionKey(store, scope)`), kind and a 53-bit hash
 * plus the length of the normalized content. Two different contents may share a key only by a
 * hash collision; lookups compare the normalized contents again (see {@link sameContent}), so a
 * collision can only hide a duplicate, never merge two different facts.
 */
export function duplicateKey(partition: string, kind: string, content: string): string {
  return `${partition}\u0000${contentKey(kind, content)}`
}

/** The part of {@link duplicateKey} after its partition: kind, length and hash of the normalized content. */
export function contentKey(kind: string, content: string): string {
  const normalized = normalizeContent(content)
  return `${kind}\u0000${normalized.length}:${hash53(normalized)}`
}

/** A {@link contentKey} as a 53-bit number (what a partition's duplicate map stores per record). */
export function contentKeyHash(key: string): number {
  const [h1, h2] = cyrb53(key)
  return 4294967296 * (2097151 & h2) + (h1 >>> 0)
}

/** True when two contents are equal after {@link normalizeContent}. */
export function sameContent(a: string, b: string): boolean {
  return normalizeContent(a) === normalizeContent(b)
}

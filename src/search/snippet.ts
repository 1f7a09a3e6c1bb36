/** Snippets: the part of a content around its best match, for ranked hits. */
import { foldText, stemWord } from './text.ts'

/** Longest snippet, in code points. */
export const SNIPPET_CODE_POINTS = 160

const SNIPPET_WORD = /[\p{L}\p{N}\p{M}]+/gu

/**
 * Up to {@link SNIPPET_CODE_POINTS} code points of `content` around the first word whose term is
 * in `terms` (or the first occurrence of `needle`), cut on code point boundaries, with `…` where
 * text was left out. Content that fits is returned whole.
 */
export function snippetOf(content: string, terms: ReadonlySet<string>, needle = ''): string {
  // At most as many code points as UTF-16 units: a short content fits without being split.
  if (content.length <= SNIPPET_CODE_POINTS) return content
  const points = Array.from(content)
  if (points.length <= SNIPPET_CODE_POINTS) return content
  let unitAt = -1
  for (const match of content.matchAll(SNIPPET_WORD)) {
    const folded = foldText(match[0])
    if (terms.has(stemWord(folded)) || [...terms].some(term => term.length > 1 && folded.includes(term) && /[^\p{Script=Latin}\p{N}]/u.test(term))) {
      unitAt = match.index
      break
    }
  }
  if (unitAt === -1 && needle !== '') unitAt = content.toLowerCase().indexOf(needle)
  // Code point index of the match, then a window that starts a little before it.
  const pointAt = unitAt <= 0 ? 0 : Array.from(content.slice(0, unitAt)).length
  const start = Math.max(0, Math.min(pointAt - 40, points.length - SNIPPET_CODE_POINTS))
  const end = Math.min(points.length, start + SNIPPET_CODE_POINTS)
  return `${start > 0 ? '…' : ''}${points.slice(start, end).join('').trim()}${end < points.length ? '…' : ''}`
}

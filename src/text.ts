/**
 * Text checked where it enters, and escaped where it reaches a prompt (docs/security.md, "Text
 * checked where it enters").
 *
 * Entering: a string with a lone surrogate (half of a UTF-16 pair: not valid Unicode, and refused
 * by some model providers) is refused, never stored, so that it cannot reach every later prompt
 * of its user; JSON data nested deeper than a bound is refused with a clear error instead of
 * overflowing the stack.
 *
 * Prompt blocks (recall's `<memory>`, history's `<conversation-summary>`): `&`, `<`, `>` become
 * entities, so stored text can neither close nor open a tag; characters that break lines or
 * reorder text invisibly (C0 and C1 controls other than tab, line feed and carriage return,
 * U+2028, U+2029, the bidirectional controls, U+FEFF) become visible `\u{…}` escapes; a lone
 * surrogate (from a store written before these checks) becomes U+FFFD.
 */

/** Deepest nesting of objects and arrays accepted in stored JSON fields (metadata, provenance). */
export const MAX_JSON_DEPTH = 32

const nativeIsWellFormed = (String.prototype as { isWellFormed?: (this: string) => boolean }).isWellFormed

/** The UTF-16 index of the first lone surrogate of `text`, or -1 when it is well-formed. */
export function loneSurrogateAt(text: string): number {
  // The native check first (Node 20, current browsers): almost every text is well formed.
  if (nativeIsWellFormed !== undefined && nativeIsWellFormed.call(text)) return -1
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit >= 0xd800 && unit <= 0xdbff) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++
        continue
      }
      return i
    }
    if (unit >= 0xdc00 && unit <= 0xdfff) return i
  }
  return -1
}

/** What {@link findTextProblem} found: where (a dotted path; `(root)` for the value itself) and what. */
export type TextProblem =
  | { path: string; problem: 'lone-surrogate'; index: number }
  | { path: string; problem: 'too-deep'; depth: number; maxDepth: number }

/**
 * The first string holding a lone surrogate (values and keys), or the first place nested deeper
 * than `maxDepth` (default {@link MAX_JSON_DEPTH}), in `value`; `undefined` when there is none.
 * Iterative: any depth is inspected without recursion.
 */
export function findTextProblem(value: unknown, maxDepth = MAX_JSON_DEPTH): TextProblem | undefined {
  // The common case (no problem) is seen without building anything; the walk below says where one is.
  if (!hasTextProblem(value, 0, maxDepth)) return undefined
  // Each item links to its parent: the path is built only for the one item with a problem.
  const stack: TextItem[] = [{ value, key: undefined, parent: undefined, depth: 0 }]
  while (stack.length) {
    const item = stack.pop()!
    if (typeof item.value === 'string') {
      const index = loneSurrogateAt(item.value)
      if (index >= 0) return { path: where(pathOf(item)), problem: 'lone-surrogate', index }
      continue
    }
    if (item.value === null || typeof item.value !== 'object') continue
    if (item.depth >= maxDepth) return { path: where(pathOf(item)), problem: 'too-deep', depth: item.depth + 1, maxDepth }
    if (Array.isArray(item.value)) {
      for (let i = item.value.length - 1; i >= 0; i--) stack.push({ value: item.value[i], key: String(i), parent: item, depth: item.depth + 1 })
      continue
    }
    const entries = Object.entries(item.value as Record<string, unknown>)
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!
      const index = loneSurrogateAt(key)
      if (index >= 0) return { path: where([...pathOf(item), key]), problem: 'lone-surrogate', index }
      stack.push({ value: child, key, parent: item, depth: item.depth + 1 })
    }
  }
  return undefined
}

/** Whether {@link findTextProblem} finds a problem in `value` at `depth`: the same rules, as a recursive check that builds nothing (at most `maxDepth` deep). */
function hasTextProblem(value: unknown, depth: number, maxDepth: number): boolean {
  if (typeof value === 'string') return loneSurrogateAt(value) >= 0
  if (value === null || typeof value !== 'object') return false
  if (depth >= maxDepth) return true
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (hasTextProblem(value[i], depth + 1, maxDepth)) return true
    return false
  }
  // Own enumerable string keys, as Object.entries lists them.
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue
    if (loneSurrogateAt(key) >= 0 || hasTextProblem((value as Record<string, unknown>)[key], depth + 1, maxDepth)) return true
  }
  return false
}

/** A value met by {@link findTextProblem}: its key in its parent (`undefined` at the root). */
interface TextItem {
  value: unknown
  key: string | undefined
  parent: TextItem | undefined
  depth: number
}

function pathOf(item: TextItem): string[] {
  const path: string[] = []
  for (let at: TextItem | undefined = item; at?.key !== undefined; at = at.parent) path.push(at.key)
  return path.reverse()
}

/** A path for messages: long paths (deep nesting) are shortened to their first four segments. */
function where(path: string[]): string {
  return path.length === 0 ? '(root)' : path.length > 6 ? `${path.slice(0, 4).join('.')}.…` : path.join('.')
}

/** One sentence about a {@link TextProblem}, with what to do, for error messages a model can act on. */
export function describeTextProblem(problem: TextProblem): string {
  return problem.problem === 'lone-surrogate'
    ? `${problem.path} holds a lone surrogate at index ${problem.index} (half of a UTF-16 pair: not valid Unicode); remove it or replace it with U+FFFD (for example with text.toWellFormed())`
    : `${problem.path} is nested more than ${problem.maxDepth} levels deep; flatten it`
}

// C0 controls except \t \n \r, DEL and C1 controls, U+2028/U+2029, bidi controls, BOM; and lone surrogates.
const INVISIBLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g

/**
 * `text` made safe for a prompt block: `&` `<` `>` as `&amp;` `&lt;` `&gt;`, invisible and
 * line-breaking characters as `\u{XXXX}` (hex), lone surrogates as U+FFFD. Tab, line feed and
 * carriage return are kept (callers that need one line collapse whitespace first).
 */
export function escapePromptText(text: string): string {
  return text
    .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')
    .replace(INVISIBLE, (char) => {
      const unit = char.charCodeAt(0)
      if (unit >= 0xd800 && unit <= 0xdfff) return '\ufffd'
      return `\\u{${unit.toString(16).toUpperCase()}}`
    })
}

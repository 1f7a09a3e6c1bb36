/**
 * Text erased from a workspace, remembered by this process for a while so that a writer that
 * read a value before the erasure (a run holding its thread's transcript in memory) cannot write
 * the erased text back when it saves. In process memory only, never stored: at most
 * {@link MAX_ERASED_TEXTS} texts per workspace folder or storage, the oldest dropped first.
 */
import type { Workspace } from './types.ts'

/** The text an erased piece of text is replaced with in copies outside the memory log. */
export const ERASED_MARK = '[erased]'

/** Most erased texts remembered per workspace. */
export const MAX_ERASED_TEXTS = 1000

/** What a value is, for {@link ErasedReach}: its workspace key, its owner (when it has one) and its text. */
export interface ErasedValue { key: string; owner?: { id: string; tenant?: string }; text: string }

/** Which values an erased text is erased from (an erasure scrubs its owner's values and the ones linked to it, not every value). */
export type ErasedReach = (value: ErasedValue) => boolean

interface ErasedEntry { sequence: number; text: string; reach: ErasedReach | undefined }
const registries = new WeakMap<object, ErasedEntry[]>()
let sequence = 0

// Workspace objects over one folder (or one storage) share what was erased.
function registryOf(workspace: Workspace): ErasedEntry[] {
  const owner = workspace.dir !== undefined ? folderKey(workspace.dir) : workspace.storage
  let entries = registries.get(owner)
  if (!entries) registries.set(owner, entries = [])
  return entries
}

const folderKeys = new Map<string, object>()
function folderKey(dir: string): object {
  let key = folderKeys.get(dir)
  if (!key) folderKeys.set(dir, key = { dir })
  return key
}

/** The current erasure sequence number: texts erased later than this are returned by {@link erasedSince}. */
export function erasureSequence(): number {
  return sequence
}

/** Notes texts just erased from `workspace`; `reach` (default: every value) says which values they are erased from. */
export function noteErased(workspace: Workspace, texts: readonly string[], reach?: ErasedReach): void {
  const entries = registryOf(workspace)
  for (const text of texts) entries.push({ sequence: ++sequence, text, reach })
  if (entries.length > MAX_ERASED_TEXTS) entries.splice(0, entries.length - MAX_ERASED_TEXTS)
}

/**
 * Texts erased from `workspace` after sequence number `since` (see {@link erasureSequence}) whose
 * erasure reaches `value` (made only when a text was erased since: its text is serialized then).
 */
export function erasedSince(workspace: Workspace, since: number, value?: () => ErasedValue): string[] {
  const entries = registryOf(workspace).filter(entry => entry.sequence > since)
  if (entries.length === 0) return []
  let described: ErasedValue | undefined
  return entries.filter(entry => !entry.reach || !value || entry.reach(described ??= value())).map(entry => entry.text)
}

/** `text` with every occurrence of each of `needles` (longest first) replaced by {@link ERASED_MARK}; `count` is how many were replaced. */
export function scrubString(text: string, needles: readonly string[]): { text: string; count: number } {
  let count = 0
  let out = text
  for (const needle of [...needles].sort((a, b) => b.length - a.length)) {
    if (!needle || !out.includes(needle)) continue
    const parts = out.split(needle)
    count += parts.length - 1
    out = parts.join(ERASED_MARK)
  }
  return { text: out, count }
}

/** A deep copy of JSON data with every string (values and keys) scrubbed by {@link scrubString}; iterative, so any depth works. */
export function scrubJson<T>(value: T, needles: readonly string[]): { value: T; count: number } {
  let count = 0
  const scrub = (text: string) => {
    const result = scrubString(text, needles)
    count += result.count
    return result.text
  }
  const root: { value: unknown } = { value }
  const stack: Array<[Record<string | number, unknown>, string | number]> = [[root as Record<string, unknown>, 'value']]
  while (stack.length) {
    const [holder, slot] = stack.pop()!
    const current = holder[slot]
    if (typeof current === 'string') holder[slot] = scrub(current)
    else if (Array.isArray(current)) {
      const copy = [...current]
      holder[slot] = copy
      for (let i = 0; i < copy.length; i++) stack.push([copy as unknown as Record<number, unknown>, i])
    }
    else if (current !== null && typeof current === 'object') {
      const copy: Record<string, unknown> = {}
      for (const [key, item] of Object.entries(current)) copy[scrub(key)] = item
      holder[slot] = copy
      for (const key of Object.keys(copy)) stack.push([copy, key])
    }
  }
  return { value: root.value as T, count }
}

/** Whether `text` holds one of `needles` as is or in its JSON string form (escaped quotes, newlines, ...). */
export function holdsAny(text: string, needles: readonly string[]): boolean {
  return needles.some(needle => text.includes(needle) || text.includes(JSON.stringify(needle).slice(1, -1)))
}

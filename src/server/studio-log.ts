/**
 * The studio's view of a store's JSONL log: every complete line read once, parsed into the fields
 * the studio shows and grouped by store and scope, then grown from the end as the log grows
 * (`workspace.stat` + `readBytes` from the last offset), so paging the lines of one scope of a
 * 100,000-line log reads only what was appended since the last page. A log that shrank or was
 * replaced (compaction, a new inode) is read again from the start.
 */
import type { Workspace } from '../workspace/types.ts'
import type { MemoryScope } from '../memory/types.ts'

/** One raw line of a store's log, as stored, with the fields the inspector shows. */
export interface InspectorLogLine {
  /** 1-based line number in the whole log. */
  line: number
  text: string
  seq: number
  type: string
  recordId: string
  version: number
  at: string
  digest: string
  prev: string | null
}

/** A scope found in a log, with how many lines it has there. */
export interface LogScope {
  store: string
  scope: MemoryScope
  lines: number
}

interface ParsedLog {
  /** Bytes of complete lines read so far. */
  offset: number
  id: string | undefined
  lineCount: number
  /** Lines per `store\u0000scope key`. */
  byScope: Map<string, { store: string; scope: MemoryScope; lines: InspectorLogLine[] }>
  /** Bytes of an unfinished last line carried to the next read. */
  rest: Uint8Array
}

const logs = new WeakMap<Workspace, Map<string, ParsedLog>>()

/** A key for a scope that does not depend on the order of its fields. */
export function scopeKey(store: string, scope: MemoryScope): string {
  return `${store}\u0000${JSON.stringify(Object.entries(scope).sort(([a], [b]) => a.localeCompare(b)))}`
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b
  const joined = new Uint8Array(a.length + b.length)
  joined.set(a)
  joined.set(b, a.length)
  return joined
}

/** The parsed log at `key`, brought up to date; `undefined` when the key does not exist. */
export async function parsedLog(workspace: Workspace, key: string): Promise<ParsedLog | undefined> {
  const stat = await workspace.stat(key)
  let byKey = logs.get(workspace)
  if (!byKey) logs.set(workspace, byKey = new Map())
  if (!stat) {
    byKey.delete(key)
    return undefined
  }
  let parsed = byKey.get(key)
  const consumed = parsed ? parsed.offset + parsed.rest.length : 0
  if (!parsed || stat.size < consumed || (stat.id !== undefined && stat.id !== parsed.id)) {
    parsed = { offset: 0, id: stat.id, lineCount: 0, byScope: new Map(), rest: new Uint8Array(0) }
    byKey.set(key, parsed)
  }
  if (stat.size === parsed.offset + parsed.rest.length) return parsed
  const tail = await workspace.readBytes(key, parsed.offset + parsed.rest.length)
  if (!tail) return parsed
  const bytes = concat(parsed.rest, tail)
  const end = bytes.lastIndexOf(10) + 1
  const text = new TextDecoder().decode(bytes.subarray(0, end))
  parsed.rest = bytes.slice(end)
  parsed.offset += end
  for (const line of text.split('\n')) {
    if (line === '') continue
    parsed.lineCount += 1
    let event: Record<string, unknown>
    try {
      event = JSON.parse(line) as Record<string, unknown>
    } catch {
      // A line that is not JSON belongs to no scope; verify names it.
      continue
    }
    if (typeof event.store !== 'string' || !event.scope || typeof event.scope !== 'object') continue
    const scope = event.scope as MemoryScope
    const group = scopeKey(event.store, scope)
    let entry = parsed.byScope.get(group)
    if (!entry) parsed.byScope.set(group, entry = { store: event.store, scope, lines: [] })
    entry.lines.push({
      line: parsed.lineCount, text: line, seq: Number(event.seq), type: String(event.type), recordId: String(event.recordId),
      version: Number(event.version), at: String(event.at), digest: String(event.digest), prev: typeof event.prev === 'string' ? event.prev : null,
    })
  }
  return parsed
}

/** The scopes present in the log at `key`, for `store` when given, most lines first. */
export async function logScopes(workspace: Workspace, key: string, store?: string): Promise<LogScope[]> {
  const parsed = await parsedLog(workspace, key)
  if (!parsed) return []
  return [...parsed.byScope.values()]
    .filter(entry => store === undefined || entry.store === store)
    .map(entry => ({ store: entry.store, scope: entry.scope, lines: entry.lines.length }))
    .sort((a, b) => b.lines - a.lines)
}

/** A page of the lines of one store and scope, oldest first. */
export interface LogLinePage {
  total: number
  offset: number
  limit: number
  lines: InspectorLogLine[]
}

/** Lines `offset .. offset + limit` of `store` and `scope` in the log at `key`. */
export async function pageScopeLines(workspace: Workspace, key: string, store: string, scope: MemoryScope, page: { offset: number; limit: number }): Promise<LogLinePage> {
  const parsed = await parsedLog(workspace, key)
  const lines = parsed?.byScope.get(scopeKey(store, scope))?.lines ?? []
  return { total: lines.length, offset: page.offset, limit: page.limit, lines: lines.slice(page.offset, page.offset + page.limit) }
}

/** Every line of one record in `store` and `scope`, oldest first. */
export async function recordLines(workspace: Workspace, key: string, store: string, scope: MemoryScope, recordIds: ReadonlySet<string>): Promise<InspectorLogLine[]> {
  const parsed = await parsedLog(workspace, key)
  return (parsed?.byScope.get(scopeKey(store, scope))?.lines ?? []).filter(line => recordIds.has(line.recordId))
}

/**
 * Conversation history storage: one append-only JSONL value per scope in the agent workspace,
 * folded into entries in process memory.
 *
 * Source: the conversation-memory document (seed 004): entries with a role (`user`,
 * `assistant`, `summary`), content and timestamps, added after each response, updated, deleted
 * and cleared; a summary replaces the middle of a long conversation. A summary records
 * which entries it covers, and deleting a covered entry marks its summary stale, so a summary
 * never stands for text that is gone.
 *
 * ## Line format (version 1)
 *
 * One JSON object per line, ended by `\n`, with `v: 1`, `type` and `at` (ISO 8601):
 * - `add`: `entries: [{ id, role, content, runId?, messageData? }]` (one line per batch, so an
 *   invocation's messages arrive together or not at all);
 * - `update`: `id`, `content`;
 * - `delete`: `id`;
 * - `clear`: every entry before it is deleted;
 * - `summary`: `id`, `content`, `covers` (ids of the user and assistant entries it summarizes),
 *   `replaces` (ids of the summaries it takes over: an older summary, or a stale one).
 *
 * Lines are never rewritten. Folding is tolerant of races between processes: an event whose
 * target is gone changes nothing, and a `summary` whose covered entries changed meanwhile is
 * ignored (a summary can only apply to exactly the entries it was computed from).
 */
import { identityOf, type IdentityRef } from '../agent/identity.ts'
import { agentError } from '../errors.ts'
import { sha256Hex } from '../log/digest.ts'
import { scopeKey } from '../memory/scope.ts'
import type { MemoryScope } from '../memory/types.ts'
import type { HistoryBackend } from './stores.ts'

/** Role of a history entry: a message of the conversation, or a summary of some of them. */
export type HistoryRole = 'user' | 'assistant' | 'summary'

/** A history entry as the API returns it (a copy). */
export interface HistoryEntry {
  /** `hist_` + 32 hex characters. */
  id: string
  role: HistoryRole
  content: string
  /** ISO 8601 instant the entry was added. */
  createdAt: string
  /** ISO 8601 instant of the last change (update, or creation). */
  updatedAt: string
  /** 1 when added, +1 per update. */
  version: number
  /** The run that added the entry (entries stored by the capability). */
  runId?: string
  /** Structured data of the message (seed 004, `message_data`): the tool calls of an assistant message and their results. */
  messageData?: HistoryMessageData
  /** `active`: in the window the model sees; `covered`: replaced there by the summary `coveredBy`. */
  status: 'active' | 'covered'
  coveredBy?: string
  /** Summaries: ids of the user and assistant entries summarized. */
  covers?: string[]
  /**
   * Summaries: `true` after a covered entry was deleted or updated. A stale summary is left out of
   * the model's window (so deleted text never reaches the model) until summarization rewrites it.
   */
  stale?: boolean
}

/**
 * Structured data kept with an entry (seed 004: "`message_data`: Optional structured data (e.g.,
 * tool calls)"). The capability fills it for assistant messages that called tools: each call
 * with its input, and the result the tool gave (`output`, or `error` text).
 */
export interface HistoryMessageData {
  toolCalls?: Array<{ toolCallId: string; toolName: string; input: unknown }>
  toolResults?: Array<{ toolCallId: string; toolName: string; output: unknown }>
  [field: string]: unknown
}

/** What an `add` takes per entry. */
export interface HistoryEntryInput {
  role: 'user' | 'assistant'
  content: string
  runId?: string
  /** JSON data kept with the entry; not sent to the model. */
  messageData?: HistoryMessageData
}

type HistoryEvent =
  | { v: 1; type: 'add'; at: string; entries: Array<{ id: string; role: 'user' | 'assistant'; content: string; runId?: string; messageData?: HistoryMessageData }> }
  | { v: 1; type: 'update'; at: string; id: string; content: string }
  | { v: 1; type: 'delete'; at: string; id: string }
  | { v: 1; type: 'clear'; at: string }
  | { v: 1; type: 'summary'; at: string; id: string; content: string; covers: string[]; replaces: string[] }

/** An entry in the folded state. */
export interface HistoryItem extends HistoryEntry {
  /** Order in the conversation: adds count up; a summary takes the place of the first entry it covers. */
  position: number
  deleted: boolean
  /** A summary taken over by a newer one. */
  replaced: boolean
}

/** The folded state of one history value. */
export interface HistoryState {
  items: Map<string, HistoryItem>
  positions: number
}

/** A proposed summary, checked against the state under the lock before it is written. */
export interface SummaryDraft {
  id: string
  content: string
  covers: string[]
  replaces: string[]
  /** Version of every entry the summary was computed from (covered entries and replaced summaries) when it was planned. */
  basis: Record<string, number>
}

/** One scope's history value in a workspace. */
export interface HistoryFile {
  readonly workspace: HistoryBackend
  /** Workspace key, `history:<readable scope>-<hash>.jsonl`. */
  readonly key: string
  readonly scope: MemoryScope
  /** The current state (after lines other writers added). Do not mutate it. */
  load(): Promise<HistoryState>
  add(entries: readonly HistoryEntryInput[]): Promise<HistoryEntry[]>
  update(id: string, content: string): Promise<HistoryEntry | undefined>
  delete(id: string): Promise<HistoryEntry | undefined>
  clear(): Promise<number>
  /** Writes the summary when every entry of its basis is unchanged; `false` (nothing written) otherwise. */
  commitSummary(draft: SummaryDraft): Promise<HistoryEntry | false>
}

interface Cache {
  /** Length of the committed text folded into `state`, in UTF-16 code units. */
  chars: number
  /** The last committed line, to notice a rewrite of the value. */
  lastLine: string
  /** Committed lines folded. */
  lines: number
  state: HistoryState
}

const caches = new WeakMap<HistoryBackend, Map<string, Cache>>()

/**
 * The scope of `history({ scope: 'user' })` for `user` of `agent`: `{ agent, tenant, user }`, or
 * `{ agent, user }` for a user without a tenant. The tenant is part of the identity (see
 * docs/security.md, "One identity everywhere"): one user id in two tenants has two histories.
 */
export function userHistoryScope(agent: string, user: IdentityRef): MemoryScope {
  const identity = identityOf(user)!
  return { agent, ...(identity.tenant !== undefined ? { tenant: identity.tenant } : {}), user: identity.id }
}

/**
 * The workspace key of a scope's history: `history:` + a readable, lower-case form of the scope
 * values (at most 60 characters of `[a-z0-9_-]`) + `-` + 24 hex characters of the SHA-256 of
 * the canonical scope key, + `.jsonl`. The hash keeps two scopes apart even when their readable
 * parts agree (case-insensitive file systems, long or unusual ids); raw values never reach the key.
 */
export async function historyKey(scope: MemoryScope): Promise<string> {
  const canonical = scopeKey(scope)
  const readable = Object.entries(scope).map(([field, value]) => `${field}-${value}`).join('_').toLowerCase().replace(/[^a-z0-9_-]+/g, '-').slice(0, 60)
  const hash = (await sha256Hex(canonical)).slice(0, 24)
  return `history:${readable}-${hash}.jsonl`
}

/** Drops this process's folded copy of a history value, so the next operation reads it again (after it was rewritten by erasure). */
export function forgetHistoryCache(workspace: HistoryBackend, key: string): void {
  caches.get(workspace)?.delete(key)
}

/** Opens the history value of `scope` in `workspace` (a history store's backend; nothing is read until the first operation). */
export async function openHistoryFile(workspace: HistoryBackend, scope: MemoryScope): Promise<HistoryFile> {
  const key = await historyKey(scope)
  const lockKey = `${key}.lock`
  let byKey = caches.get(workspace)
  if (!byKey) caches.set(workspace, byKey = new Map())

  async function load(): Promise<{ state: HistoryState; text: string; committed: number }> {
    const text = (await workspace.readText(key)) ?? ''
    const committed = text.lastIndexOf('\n') + 1
    let cache = byKey!.get(key)
    const continues = cache && cache.chars <= committed && (cache.chars === 0 || text.slice(cache.chars - cache.lastLine.length - 1, cache.chars - 1) === cache.lastLine)
    if (!cache || !continues) {
      cache = { chars: 0, lastLine: '', lines: 0, state: { items: new Map(), positions: 0 } }
      byKey!.set(key, cache)
    }
    if (committed > cache.chars) {
      const lines = text.slice(cache.chars, committed - 1).split('\n')
      try {
        for (const line of lines) applyEvent(cache.state, parseLine(line, ++cache.lines, key))
      }
      catch (error) {
        // Never keep a half-folded state: the next load starts over (and fails again, loudly).
        byKey!.delete(key)
        throw error
      }
      cache.chars = committed
      cache.lastLine = lines.at(-1)!
    }
    return { state: cache.state, text, committed }
  }

  /** Appends one event under the lock; `build` sees the current state and returns the event or `undefined` (nothing to write). */
  async function write<T>(build: (state: HistoryState) => { event: HistoryEvent; result: (state: HistoryState) => T } | undefined, none: T): Promise<T> {
    if (!workspace.writable) {
      throw agentError('HISTORY_WORKSPACE_READ_ONLY', `the workspace is read-only, so the conversation history "${key}" cannot be written`, 'give the agent a writable workspace, or remove history() from its capabilities', { key })
    }
    return workspace.withLock(lockKey, async () => {
      const { state, text, committed } = await load()
      const planned = build(state)
      if (!planned) return none
      if (committed < text.length) {
        // A torn last line (a crash mid-append): cut it off so the new line starts on its own.
        await workspace.truncate(key, Buffer.byteLength(text.slice(0, committed), 'utf8'))
      }
      await workspace.append(key, `${JSON.stringify(planned.event)}\n`)
      const after = (await load()).state
      return planned.result(after)
    })
  }

  return {
    workspace,
    key,
    scope,
    async load() {
      return (await load()).state
    },
    add(entries) {
      const at = new Date().toISOString()
      const drafts = entries.map(entry => ({ id: newEntryId(), role: entry.role, content: entry.content, ...(entry.runId ? { runId: entry.runId } : {}), ...(entry.messageData ? { messageData: entry.messageData } : {}) }))
      return write(() => drafts.length === 0
        ? undefined
        : { event: { v: 1, type: 'add', at, entries: drafts }, result: state => drafts.map(draft => copy(state.items.get(draft.id)!)) }, [] as HistoryEntry[])
    },
    update(id, content) {
      return write((state) => {
        const item = live(state, id)
        if (!item) return undefined
        return { event: { v: 1, type: 'update', at: new Date().toISOString(), id, content }, result: after => copy(after.items.get(id)!) }
      }, undefined)
    },
    delete(id) {
      return write((state) => {
        const item = live(state, id)
        if (!item) return undefined
        return { event: { v: 1, type: 'delete', at: new Date().toISOString(), id }, result: () => copy(item) }
      }, undefined)
    },
    clear() {
      return write((state) => {
        const count = [...state.items.values()].filter(item => !item.deleted && !item.replaced).length
        if (count === 0) return undefined
        return { event: { v: 1, type: 'clear', at: new Date().toISOString() }, result: () => count }
      }, 0)
    },
    commitSummary(draft) {
      return write<HistoryEntry | false>((state) => {
        for (const [id, version] of Object.entries(draft.basis)) {
          const item = live(state, id)
          // A version bump means an update, a delete, a summary going stale or being replaced.
          if (!item || item.version !== version) return undefined
        }
        if (summaryConflict(state, draft.covers, draft.replaces)) return undefined
        return { event: { v: 1, type: 'summary', at: new Date().toISOString(), id: draft.id, content: draft.content, covers: draft.covers, replaces: draft.replaces }, result: after => copy(after.items.get(draft.id)!) }
      }, false as const)
    },
  }
}

/** The entries the model sees, in conversation order: active user and assistant entries and summaries that are not stale. */
export function windowItems(state: HistoryState): HistoryItem[] {
  return [...state.items.values()]
    .filter(item => !item.deleted && !item.replaced && item.status === 'active' && !(item.role === 'summary' && item.stale))
    .sort((a, b) => a.position - b.position)
}

/** Every entry that is not deleted (covered ones too), in conversation order. */
export function listItems(state: HistoryState, covered: boolean): HistoryItem[] {
  return [...state.items.values()]
    .filter(item => !item.deleted && !item.replaced && (covered || item.status === 'active'))
    .sort((a, b) => a.position - b.position)
}

/** A public copy of an item. */
export function copy(item: HistoryItem): HistoryEntry {
  const { position: _position, deleted: _deleted, replaced: _replaced, ...entry } = item
  return structuredClone(entry)
}

/** A new entry id: `hist_` + 32 hex characters. */
export function newEntryId(): string {
  return `hist_${globalThis.crypto.randomUUID().replaceAll('-', '')}`
}

function live(state: HistoryState, id: string): HistoryItem | undefined {
  const item = typeof id === 'string' ? state.items.get(id) : undefined
  return item && !item.deleted && !item.replaced ? item : undefined
}

/** Why a summary cannot apply, or `undefined`: covered entries must be live messages not covered by another summary than those it replaces. */
function summaryConflict(state: HistoryState, covers: readonly string[], replaces: readonly string[]): string | undefined {
  if (covers.length === 0) return 'it covers nothing'
  for (const id of replaces) {
    const summary = live(state, id)
    if (!summary || summary.role !== 'summary') return `"${id}" is not a live summary`
  }
  for (const id of covers) {
    const item = live(state, id)
    if (!item || item.role === 'summary') return `"${id}" is not a live message`
    if (item.status === 'covered' && !replaces.includes(item.coveredBy!)) return `"${id}" is covered by another summary`
  }
  return undefined
}

function applyEvent(state: HistoryState, event: HistoryEvent): void {
  switch (event.type) {
    case 'add':
      for (const entry of event.entries) {
        if (state.items.has(entry.id)) continue
        state.items.set(entry.id, { ...entry, createdAt: event.at, updatedAt: event.at, version: 1, status: 'active', position: ++state.positions, deleted: false, replaced: false })
      }
      return
    case 'update': {
      const item = live(state, event.id)
      if (!item) return
      item.content = event.content
      item.updatedAt = event.at
      item.version++
      markStale(state, item)
      return
    }
    case 'delete': {
      const item = live(state, event.id)
      if (!item) return
      item.deleted = true
      item.version++
      markStale(state, item)
      // A deleted summary gives its entries back to the window.
      if (item.role === 'summary') for (const id of item.covers ?? []) uncover(state, id, item.id)
      return
    }
    case 'clear':
      for (const item of state.items.values()) {
        if (item.deleted || item.replaced) continue
        item.deleted = true
        item.version++
      }
      return
    case 'summary': {
      if (state.items.has(event.id) || summaryConflict(state, event.covers, event.replaces)) return
      const positions = [...event.covers, ...event.replaces].map(id => state.items.get(id)!.position)
      for (const id of event.replaces) {
        const old = state.items.get(id)!
        old.replaced = true
        old.version++
      }
      for (const id of event.covers) {
        const item = state.items.get(id)!
        item.status = 'covered'
        item.coveredBy = event.id
      }
      state.items.set(event.id, { id: event.id, role: 'summary', content: event.content, createdAt: event.at, updatedAt: event.at, version: 1, status: 'active', covers: [...event.covers], stale: false, position: Math.min(...positions), deleted: false, replaced: false })
    }
  }
}

/** A change to a covered entry makes its summary stale: the summary may hold the old text. */
function markStale(state: HistoryState, item: HistoryItem): void {
  if (item.status !== 'covered' || !item.coveredBy) return
  const summary = state.items.get(item.coveredBy)
  if (summary && !summary.stale) {
    summary.stale = true
    summary.version++
  }
}

function uncover(state: HistoryState, id: string, summaryId: string): void {
  const item = state.items.get(id)
  if (item && item.coveredBy === summaryId) {
    item.status = 'active'
    delete item.coveredBy
  }
}

function parseLine(line: string, number: number, key: string): HistoryEvent {
  const fail = (why: string) => agentError('HISTORY_LOG_CORRUPT', `line ${number} of the conversation history "${key}" ${why}`, 'restore the file from a backup, or move the bad line aside by hand; history is never repaired silently', { key, line: number })
  let value: unknown
  try {
    value = JSON.parse(line)
  }
  catch {
    throw fail('is not valid JSON')
  }
  const event = value as Record<string, unknown>
  if (!event || typeof event !== 'object' || event.v !== 1 || typeof event.at !== 'string') throw fail('is not a history event of version 1')
  const isString = (field: unknown) => typeof field === 'string'
  const isIds = (field: unknown) => Array.isArray(field) && field.every(isString)
  switch (event.type) {
    case 'add':
      if (!Array.isArray(event.entries) || !event.entries.every(entry => entry && isString(entry.id) && (entry.role === 'user' || entry.role === 'assistant') && isString(entry.content) && (entry.messageData === undefined || (typeof entry.messageData === 'object' && entry.messageData !== null && !Array.isArray(entry.messageData))))) throw fail('has malformed entries')
      break
    case 'update':
      if (!isString(event.id) || !isString(event.content)) throw fail('is an update without id or content')
      break
    case 'delete':
      if (!isString(event.id)) throw fail('is a delete without id')
      break
    case 'clear':
      break
    case 'summary':
      if (!isString(event.id) || !isString(event.content) || !isIds(event.covers) || !isIds(event.replaces)) throw fail('is a malformed summary')
      break
    default:
      throw fail(`has an unknown type ${JSON.stringify(event.type)}`)
  }
  return event as unknown as HistoryEvent
}

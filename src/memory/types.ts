import type { EmbeddingModel } from 'ai'
import type { AgentUser, ToolPolicy } from '../agent/types.ts'
import type { Workspace } from '../workspace/types.ts'

/** Built-in memory kinds (source: capability document `allowKinds`); custom kinds are any other non-empty string. */
export type BuiltinMemoryKind = 'episodic' | 'procedural' | 'profile' | 'semantic'
export type MemoryKind = BuiltinMemoryKind | (string & {})

/** Scope fields (source: capability document, `stores.*.scope`). */
export const MEMORY_SCOPE_FIELDS = ['agent', 'environment', 'project', 'session', 'tenant', 'thread', 'user', 'workspace'] as const
export type MemoryScopeField = (typeof MEMORY_SCOPE_FIELDS)[number]

/**
 * A resolved scope: at least one non-empty field. A store sees exactly the records whose scope
 * has the same fields with the same values (no subset or prefix matching).
 */
export type MemoryScope = Partial<Record<MemoryScopeField, string>>

/**
 * Where a record came from. Defaults come from the invocation; the model may replace any field
 * (source: capability document), so this is not trusted authority: see {@link MemoryAudit}.
 */
export interface MemoryProvenance {
  runId?: string
  threadId?: string
  source?: string
  toolName?: string
  [field: string]: unknown
}

/** Who caused an event, recorded by the host. The model cannot write it. */
export interface MemoryAudit {
  agent?: string
  runId?: string
  threadId?: string
  user?: string
  approver?: string
  /** Reason the approver gave when approving the write (tool writes after an approval). */
  approvalReason?: string
  /** `tool`, `api`, `cli` or `import`. */
  via: string
}

/** A record as stores return it: its latest state folded from the event log. */
export interface MemoryRecord {
  id: string
  store: string
  scope: MemoryScope
  kind: MemoryKind
  content: string
  title?: string
  tags: string[]
  metadata: Record<string, unknown>
  pinned: boolean
  /** In [0, 1] when given. */
  confidence?: number
  /** Ids this record supersedes. */
  supersedes: string[]
  provenance: MemoryProvenance
  audit: MemoryAudit
  /** ISO 8601 instant. */
  createdAt: string
  /** ISO 8601 instant of the last event on the record. */
  updatedAt: string
  /** Starts at 1; each event on the record (supersede, delete) adds one. */
  version: number
  status: 'active' | 'superseded' | 'deleted'
  supersededBy?: string
  deletedAt?: string
  deleteReason?: string
}

/** What a caller gives to create a record (id, version, timestamps are assigned by the store). */
export interface MemoryRecordInput {
  kind: MemoryKind
  content: string
  title?: string
  tags?: string[]
  metadata?: Record<string, unknown>
  pinned?: boolean
  confidence?: number
  supersedes?: string[]
  provenance?: MemoryProvenance
  /** ISO 8601 instant; default now. Imports set it to keep the original time. */
  createdAt?: string
}

/** Search input (source: capability document `memory_search`). Validated before it reaches an adapter. */
export interface MemorySearchQuery {
  query: string
  kinds?: MemoryKind[]
  tags?: string[]
  /** Only records created at or after this instant (ISO 8601). */
  after?: string
  /** Only records created before this instant (ISO 8601). */
  before?: string
  /** Most results, 1 to 100. Default 10. */
  limit?: number
  /**
   * How records are matched and ordered (issue 7). `'ranked'` (default): BM25-style full-text
   * ranking over stemmed, accent-folded terms, always including the records the substring rule
   * returns. `'substring'`: exactly the documented rule (case-insensitive occurrences of the whole
   * query string). Stores set it from their `search.mode` option; custom adapters may ignore it.
   */
  mode?: 'ranked' | 'substring'
}

/** One search result: the record, its score (ranked: BM25 points; substring: occurrences). */
export interface MemorySearchHit {
  record: MemoryRecord
  score: number
  /**
   * Ranked search only: up to 160 characters of the content around the best match, cut on code
   * point boundaries, with `…` where text was left out (issue 7, "snippets around the best match").
   */
  snippet?: string
}

/** The store and scope every adapter operation runs in. Resolved by the capability, never by the model. */
export interface MemoryTarget {
  store: string
  scope: MemoryScope
}

/** Options of a delete. */
export interface MemoryDeleteOptions {
  reason?: string
  audit: MemoryAudit
}

/** Options of an append. */
export interface MemoryAppendOptions {
  audit: MemoryAudit
}

/**
 * A store adapter (source: capability document: "A custom adapter implements `search`, `read`,
 * `append`, `delete`, and `export`"). Every method receives the target store and scope and must
 * act only on records of exactly that scope.
 *
 * Errors: `append` throws `MEMORY_SUPERSEDE_NOT_FOUND` when a `supersedes` id is not an active
 * record of the scope (and writes nothing); `delete` returns `undefined` for an id that is not a
 * record of the scope (unknown and other-scope ids answer alike).
 */
export interface MemoryStoreAdapter {
  /** Active records of the scope that match, best first, at most `limit` (default 10). */
  search(target: MemoryTarget, query: MemorySearchQuery): Promise<MemorySearchHit[]>
  /** The record with this id in this scope, in any status; `undefined` when absent. */
  read(target: MemoryTarget, id: string): Promise<MemoryRecord | undefined>
  /** Adds a record (and marks `supersedes` ids superseded) as one all-or-nothing write. */
  append(target: MemoryTarget, input: MemoryRecordInput, options: MemoryAppendOptions): Promise<MemoryRecord>
  /** Soft-deletes: appends a tombstone, keeps the original. Returns the deleted record, or `undefined` when not found. */
  delete(target: MemoryTarget, id: string, options: MemoryDeleteOptions): Promise<MemoryRecord | undefined>
  /** Every record of the scope in creation order, in any status. */
  export(target: MemoryTarget): Promise<MemoryRecord[]>
}

/** What a {@link MemoryStoreFactory} receives when the capability resolves. */
export interface MemoryStoreContext {
  store: string
  agent: string
  workspace?: Workspace
  user?: AgentUser
  /** True when the store's `write.mode` is `'tool'` (the adapter may need write access). */
  writable: boolean
}

/** A factory that creates an adapter at each invocation (source: capability document `MemoryStoreFactory`). */
export interface MemoryStoreFactory {
  kind: string
  create(context: MemoryStoreContext): MemoryStoreAdapter | Promise<MemoryStoreAdapter>
}

/** What a scope function receives: the capability context without its mutators. */
export interface MemoryScopeContext {
  agent: string
  run: { runId: string; threadId: string }
  user?: AgentUser
  metadata: Record<string, unknown>
  store: string
}

/** Options of one store (source: capability document, Options table). */
export interface MemoryStoreOptions {
  adapter: MemoryStoreAdapter | MemoryStoreFactory
  /** A scope, or a function returning one; `undefined` switches the store off for the run. */
  scope: MemoryScope | ((context: MemoryScopeContext) => MemoryScope | undefined | Promise<MemoryScope | undefined>)
  /** Kinds `memory_remember` accepts. Default: all kinds. An empty list accepts none. */
  allowKinds?: MemoryKind[]
  read?: { tools?: { search?: boolean; read?: boolean } }
  write?: { mode?: 'off' | 'tool'; policy?: ToolPolicy }
  /** Reserved retention settings (accepted; implemented by the retention issue). */
  retention?: { export?: boolean; hardDelete?: boolean }
  /**
   * How `memory_search` and preflight recall match (issue 7). `mode: 'ranked'` (default): BM25
   * full-text ranking that always includes the substring rule's results; `'substring'`: exactly
   * the documented rule (case-insensitive occurrences of the whole query).
   */
  search?: { mode?: 'ranked' | 'substring' }
  /**
   * An AI SDK `EmbeddingModel` (issue 7, semantic search): `memory_search` and preflight recall
   * fuse the full-text ranking with cosine similarity of `embedMany`/`embed` vectors by reciprocal
   * rank fusion. Vectors are computed at search time and kept in process memory, never in the log.
   * An embedder failure falls back to full-text results. Ignored with `search.mode: 'substring'`.
   */
  embed?: EmbeddingModel
  /** Recall into the system prompt (issue 7; see {@link MemoryRecallOptions}). Default: none. */
  recall?: MemoryRecallOptions
}

/**
 * Recall of one store into the system prompt, in a `<memory store="name">` block that is sent to
 * the model only (never saved in the transcript). Source: slots document (recall at the run's
 * first model call) and hosted-memory document (`preload`, `preflight`).
 */
export interface MemoryRecallOptions {
  /**
   * At the run's first model call, the `limit` (1..100) newest active records, pinned first,
   * optionally only of `kinds` (an empty list recalls none). The same records stay for the
   * rest of the run, minus any deleted or superseded meanwhile.
   */
  preload?: { limit: number; kinds?: MemoryKind[] }
  /**
   * Before each model call, a search (the store's search mode) with the text of the last
   * `conversationWindow` (1..50) user and assistant messages; up to `limit` (1..100) records
   * not already preloaded.
   */
  preflight?: { limit: number; conversationWindow: number }
  /**
   * Most code points of the whole block, 200..100,000, default 4,000 (about 1,000 tokens).
   * Records that do not fit are left out and the block says how many; a record is cut on a code
   * point boundary only when it is the first one and alone exceeds the budget.
   */
  maxChars?: number
}

/** Options of {@link memory}. */
export interface MemoryOptions {
  stores: Record<string, MemoryStoreOptions>
}

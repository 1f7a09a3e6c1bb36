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
  /** Reason the approver gave when approving the write (tool writes after an approval). Free text: a log line holds it as its payload member `approvalReason`, which erasure removes. */
  approvalReason?: string
  /** `tool`, `api`, `cli`, `import` or `retention` (expiry by `retention.maxItems` / `maxAge`). */
  via: string
}

/**
 * The structured episode of an `episodic` record (hosted-memory document, "OTAR":
 * observation, thoughts, action, result). `observation` is required; every field is plain text of
 * at most `MEMORY_LIMITS.episodeFieldChars` (2,000) characters. Its text is searchable like the
 * content.
 */
export interface MemoryEpisode {
  /** What happened: user input, context, problem. */
  observation: string
  /** Why the agent chose its approach. */
  thoughts?: string
  /** What the agent did: tool calls, responses, workflow. */
  action?: string
  /** What happened and what the agent learned. */
  result?: string
}

/** The fields of a record's content, shared by the record, its `remember` event and a write candidate. */
export interface MemoryRecordContent {
  kind: MemoryKind
  content: string
  title?: string
  tags: string[]
  metadata: Record<string, unknown>
  pinned: boolean
  /** In [0, 1] when given. */
  confidence?: number
  /** Episodic records only: the structured episode. */
  episode?: MemoryEpisode
}

/** A record as stores return it: its latest state folded from the event log. */
export interface MemoryRecord extends MemoryRecordContent {
  id: string
  store: string
  scope: MemoryScope
  /** Search keywords (hosted-memory document, metadata); searchable and filterable. Absent when none were given. */
  keywords?: string[]
  /** Topics (hosted-memory document, metadata); searchable and filterable. Absent when none were given. */
  topics?: string[]
  /** The user's own words the record was taken from (hosted-memory document, `rawExtract`). Stored and returned, not searched. */
  rawExtract?: string
  /** Phrases of later questions the record answers (hosted-memory document, `recallTriggers`); searched with the tags, same weight. */
  recallTriggers?: string[]
  /** Ids this record supersedes. */
  supersedes: string[]
  provenance: MemoryProvenance
  audit: MemoryAudit
  /** ISO 8601 instant. */
  createdAt: string
  /**
   * When the remembered thing happened (event time), as given: an ISO 8601 instant with a zone
   * or a calendar date `YYYY-MM-DD`. Distinct from `createdAt` (when it was written). Absent
   * when not given; filters then use `createdAt` (see `occurredAfter`).
   */
  occurredAt?: string
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
  /** Only with kind `episodic` (the capability checks it; adapters store what they get). */
  episode?: MemoryEpisode
  keywords?: string[]
  topics?: string[]
  /** See {@link MemoryRecord.rawExtract}. */
  rawExtract?: string
  /** See {@link MemoryRecord.recallTriggers}. */
  recallTriggers?: string[]
  supersedes?: string[]
  provenance?: MemoryProvenance
  /** ISO 8601 instant; default now. Imports set it to keep the original time. */
  createdAt?: string
  /** Event time: an ISO 8601 instant with a zone or a calendar date `YYYY-MM-DD` (see {@link MemoryRecord.occurredAt}). */
  occurredAt?: string
}

/** Search input (source: capability document `memory_search`). Validated before it reaches an adapter. */
export interface MemorySearchQuery {
  query: string
  kinds?: MemoryKind[]
  tags?: string[]
  /** Only records carrying every listed keyword (case-insensitive; an empty list adds no condition). */
  keywords?: string[]
  /** Only records with at least one of these topics (case-insensitive; an empty list matches nothing). */
  topics?: string[]
  /** Only records created at or after this instant (ISO 8601). */
  after?: string
  /** Only records created before this instant (ISO 8601). */
  before?: string
  /**
   * Only records whose event time (`occurredAt`, else `createdAt`) is at or after this instant
   * (ISO 8601; a bare date is midnight UTC, and so is a record's calendar-date `occurredAt`).
   */
  occurredAfter?: string
  /** Only records whose event time (`occurredAt`, else `createdAt`) is before this instant. */
  occurredBefore?: string
  /** Most results, 1 to 100. Default 10. */
  limit?: number
  /**
   * How records are matched and ordered. `'ranked'` (default): BM25-style full-text
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
   * point boundaries, with `…` where text was left out.
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
  /**
   * With `duplicates: 'skip'`: called when the store found an active record of the same scope and
   * kind with the same content and appended nothing; `append` then returns that existing record
   * (hosted-memory document, duplicate suppression). Log-backed stores call it; a custom adapter
   * may ignore it.
   */
  onDuplicate?: (existing: MemoryRecord) => void
  /**
   * `'skip'`: when the scope holds an active record of the same kind whose content is equal after
   * NFKC, case folding and whitespace collapsing, append nothing, call `onDuplicate` and return
   * that record (decided under the log's write lock: race-free). `memory_remember` always passes
   * `'skip'`. Default `'keep'` (code writing through the adapter gets exactly what it appends).
   */
  duplicates?: 'skip' | 'keep'
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
  /**
   * Optional change signal of one scope: what changed since `since` (a {@link MemoryScopeChanges.cursor}
   * an earlier call returned; `undefined` for the first call). With it, hybrid search keeps the
   * scope's active records and their vector index between searches and applies only what changed
   * (writes, supersedes, deletes and erasures, by this process or any other writer); without
   * it, every hybrid search reads the scope through {@link export}. An adapter that offers it
   * also answers `search` with `mode: 'substring'` by the documented substring rule.
   */
  changes?(target: MemoryTarget, since?: unknown): Promise<MemoryScopeChanges>
  /**
   * Where hybrid search keeps record vectors. The log-backed stores keep them in the
   * log's sidecar `<log key>.vectors` and remove them when records are erased; without it,
   * vectors live in process memory for as long as the adapter object.
   */
  vectors?: MemoryVectorStore
}

/**
 * What {@link MemoryStoreAdapter.changes} returns. With `reset` true, `records` holds every active
 * record of the scope in creation order and the caller drops what it had; else `records` holds
 * each record changed since the cursor in its current status (one that is no longer active
 * leaves the active set) and `removed` the ids erased since. Records are the store's own
 * objects: read them, never change them.
 */
export interface MemoryScopeChanges {
  /** Pass it to the next call; opaque, valid in this process only. */
  cursor: unknown
  reset: boolean
  records: readonly MemoryRecord[]
  removed: readonly string[]
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
  /**
   * What the store holds, in a few words (at most 500 characters); added to the description of
   * every tool that serves the store (slots document, `description`). Default none.
   */
  description?: string
  /**
   * `'shared'` (default): the store is served by `memory_search`, `memory_read`,
   * `memory_remember` and `memory_delete`. `'named'` (slots document): the store gets its own
   * `remember_<store>({ text })` (when `write.mode` is `'tool'`) and `recall_<store>({ query?,
   * limit? })` (when `read.tools.search` is on) instead, and its recall block is
   * `<memory name="store">` with one `- item` line per record. The store name is then 1-55
   * characters. See {@link memorySlot} for the slots document's defaults.
   */
  tools?: 'shared' | 'named'
  /** A scope, or a function returning one; `undefined` switches the store off for the run. */
  scope: MemoryScope | ((context: MemoryScopeContext) => MemoryScope | undefined | Promise<MemoryScope | undefined>)
  /** Kinds `memory_remember` accepts. Default: all kinds. An empty list accepts none. */
  allowKinds?: MemoryKind[]
  read?: { tools?: { search?: boolean; read?: boolean } }
  write?: {
    mode?: 'off' | 'tool'
    policy?: ToolPolicy
    /**
     * Quality filter of tool writes (`memory_remember`, `remember_<store>`; hosted-memory
     * document, "Quality filter"): runs after the built-in checks and before approval and
     * writing; return `'accept'` (or nothing) to keep the write, `{ reject: reason }` to refuse
     * it with `MEMORY_WRITE_REJECTED` (the reason reaches the model). A filter that throws
     * rejects the write with `MEMORY_WRITE_FILTER_FAILED`. Default: {@link defaultMemoryFilter}
     * (greetings, thanks, fillers, generic traits and moods); a function replaces it, `false`
     * switches filtering off. Writes from code through the adapter are never filtered.
     */
    filter?: MemoryWriteFilter | false
    /**
     * Fills `keywords` and `topics` of a `memory_remember` before it is written (merged with the
     * model's, duplicates dropped, limits applied). A failing or invalid enrich never loses the
     * write: the record is saved without it and the tool result carries a `warnings` entry.
     */
    enrich?: MemoryEnrich
    /** Most characters of `memory_remember.content`, 1..8,000; default 8,000 (`MEMORY_LIMITS.contentChars`). */
    maxContentLength?: number
  }
  /** Retention of the store's records; see {@link MemoryRetentionOptions}. */
  retention?: MemoryRetentionOptions
  /**
   * How `memory_search` and preflight recall match. `mode: 'ranked'` (default): BM25
   * full-text ranking that always includes the substring rule's results; `'substring'`: exactly
   * the documented rule (case-insensitive occurrences of the whole query). `fusion`: how
   * hybrid search (with `embed`) fuses the two rankings; see {@link MemoryFusionOptions}.
   */
  search?: { mode?: 'ranked' | 'substring'; fusion?: MemoryFusionOptions }
  /**
   * An AI SDK `EmbeddingModel` (semantic search; `localEmbedder()` runs offline):
   * `memory_search` and preflight recall fuse the full-text ranking with cosine similarity of
   * `embedMany`/`embed` vectors by reciprocal rank fusion (`DEFAULT_FUSION`: k 10, top 100 of
   * each; the 2 records written before and after a candidate on its day get half its score).
   * Vectors are computed when `memory_remember` writes (or by the first search that needs
   * them), stored with the records (`adapter.vectors`: the log's sidecar, the SQLite table) with
   * the model id, loaded after a restart, erased with their record. An embedder
   * failure never fails a write and makes search fall back to full-text results. Ignored with
   * `search.mode: 'substring'`.
   */
  embed?: EmbeddingModel
  /** Recall into the system prompt (memory-slots document; see {@link MemoryRecallOptions}). Default: none. */
  recall?: MemoryRecallOptions
}

/**
 * Hybrid fusion settings of a store with `embed` (`search.fusion`); each absent field takes the
 * value of `DEFAULT_FUSION` (docs/search-and-recall.md, "Fusion defaults", gives the measurements):
 * `score = lexicalWeight / (rrfK + lexical rank) + vectorWeight / (rrfK + vector rank)`, then the
 * `neighbourSpan` records written before and after a candidate on its event day get
 * `neighbourShare` of its score. Invalid values are refused when the agent is defined
 * (`MEMORY_INVALID_OPTIONS`).
 */
export interface MemoryFusionOptions {
  /** RRF constant `k`, > 0; default 10. */
  rrfK?: number
  /** Full-text candidates fused, 1..100; default 100. */
  lexicalDepth?: number
  /** Vector candidates fused, >= 1; default 100. */
  vectorDepth?: number
  /** Weight of the full-text ranking, >= 0; default 1. */
  lexicalWeight?: number
  /** Weight of the vector ranking, >= 0; default 0.75. */
  vectorWeight?: number
  /** Share of a fused candidate's score given to its neighbours, >= 0 (0 turns it off); default 0.5. */
  neighbourShare?: number
  /** Records on each side of a candidate that get the share, >= 0; default 2. */
  neighbourSpan?: number
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
  /**
   * Slots document: most records recalled at the run's first model call, 1..100 (default 10),
   * and the default `limit` of `recall_<store>`. Setting `maxItems`, `query` or
   * `onSessionStart` describes a preload (do not also set `preload`).
   */
  maxItems?: number
  /**
   * Slots document: `'last-input'` recalls the records the store's search finds for the run's
   * last user message instead of the newest; `'none'` (default) the newest.
   */
  query?: 'last-input' | 'none'
  /** Slots document: recall at each run's first model call. Default `true` once `maxItems` or `query` is set. */
  onSessionStart?: boolean
}

/** What a write filter and an enrich hook see of a `memory_remember` call (the validated input). */
export interface MemoryWriteCandidate extends MemoryRecordContent {
  store: string
  keywords: string[]
  topics: string[]
  rawExtract?: string
  recallTriggers: string[]
}

/** Who is writing: the invocation, for a {@link MemoryWriteFilter}. */
export interface MemoryWriteFilterContext {
  store: string
  scope: MemoryScope
  agent: string
  runId: string
  threadId: string
  user?: AgentUser
}

/** A quality filter's answer: keep the write (`'accept'`, `true` or nothing) or refuse it with a reason for the model. */
export type MemoryWriteVerdict = 'accept' | true | undefined | void | { reject: string }

/** `write.filter` of a store (hosted-memory document, quality filter). */
export type MemoryWriteFilter = (candidate: MemoryWriteCandidate, context: MemoryWriteFilterContext) => MemoryWriteVerdict | Promise<MemoryWriteVerdict>

/** `write.enrich` of a store: keywords and topics to add to a record before it is written. */
export type MemoryEnrich = (candidate: MemoryWriteCandidate) => { keywords?: string[]; topics?: string[] } | undefined | void | Promise<{ keywords?: string[]; topics?: string[] } | undefined | void>

/**
 * Retention of one store (hosted-memory document, retention period). See docs/memory-kinds-and-retention.md.
 */
export interface MemoryRetentionOptions {
  /**
   * `false` refuses `exportMemoryScope` through the store's configuration and `agent memory
   * export` (`MEMORY_EXPORT_DISABLED`). Default `true`.
   */
  export?: boolean
  /**
   * `true`: `memory_delete`, API deletes through a resolved store and retention expiry erase the
   * record (an `erase` event, then a compaction that removes its content from storage) instead
   * of a soft delete. Needs a log-backed store (JSONL, in-memory, SQLite). Default `false`.
   */
  hardDelete?: boolean
  /**
   * Most active records per scope. After each write through the store, the oldest (by
   * `createdAt`) non-pinned active records over the limit expire (a `delete` event with reason
   * `retention: maxItems`, or an erase with `hardDelete`). Pinned records never expire by
   * `maxItems`, so a scope of pinned records may stay above it. Integer >= 1; default none.
   */
  maxItems?: number
  /**
   * Records older than this (by `createdAt`) stop being returned at once (search, read, export,
   * recall) and are erased (content compacted away) by `compactMemoryScope` and by writes
   * through the store, at most once a minute per scope. Milliseconds, or a duration such as
   * `'90d'`, `'12h'`, `'30m'`, `'45s'`. Applies to pinned records too. Default none.
   */
  maxAge?: number | string
}

/** Options of {@link memory}. */
export interface MemoryOptions {
  stores: Record<string, MemoryStoreOptions>
}

/** One stored vector: the record it belongs to, the embedding model that made it, the vector (unit length). */
export interface MemoryVectorEntry {
  id: string
  /** {@link embeddingModelId} of the model. */
  model: string
  vector: Float32Array
}

/** What {@link MemoryVectorStore.read} returns. */
export interface MemoryVectorRead {
  entries: MemoryVectorEntry[]
  /** Pass it to the next `read` to get only what was written since. */
  cursor: unknown
  /** `true` when the entries read before are no longer valid (the store was rewritten): start over with these. */
  reset: boolean
}

/**
 * Where a store keeps its record vectors: the seam a database store implements to keep them in a
 * column. Entries of a record id and model written twice: the later one wins. Implementations
 * need not validate entries beyond their shape; the cache checks lengths.
 */
export interface MemoryVectorStore {
  /** Entries written since `cursor` (every entry when `cursor` is `undefined`). */
  read(cursor?: unknown): Promise<MemoryVectorRead>
  /** Adds entries. A store that cannot write (read-only workspace) may keep nothing: vectors are then recomputed after a restart. */
  write(entries: readonly MemoryVectorEntry[]): Promise<void>
  /** Removes every entry of these record ids, of every model, from the stored bytes (erasure). */
  remove(ids: readonly string[]): Promise<void>
  /**
   * Optional, for a store that can look vectors up by record (a database): the stored entries of
   * `model` for these ids (ids without one left out). With it, the cache loads the vectors of the
   * records a search needs, when it first needs them, instead of reading every entry through
   * {@link read}. `group`: the partition key of the scope the ids are of, when the caller knows
   * it (a store may keep a derived copy per group: the sidecar keeps a scope's vectors as one
   * block).
   */
  fetch?(model: string, ids: readonly string[], group?: string): Promise<MemoryVectorEntry[]>
  /**
   * Optional, with {@link nearest}, for a store that scores vectors where it keeps them (the
   * Postgres store with `scoreInDatabase`): the ids among `ids` that have no vector of `model`.
   * With both, the vectors are never loaded into process memory: a search asks the store.
   */
  missing?(model: string, ids: readonly string[]): Promise<string[]>
  /**
   * Optional (see {@link missing}): at most `limit` of `ids` with a vector of `model`, by cosine
   * similarity to `vector` (unit length), highest first; ties go to the record created first,
   * as the in-process index breaks them.
   */
  nearest?(model: string, ids: readonly string[], vector: Float32Array, limit: number): Promise<Array<{ id: string; similarity: number }>>
}


/**
 * Retention of memory stores (hosted-memory document, retention period; memory-slots document,
 * per-scope `maxItems`): `maxItems` and `maxAge` expiry, hard deletes, erasing a whole scope,
 * and the portable export/import of a scope.
 *
 * The operations that change the log run as one scope write each (scope-write.ts): a `build`
 * that reads the scope through a `MemoryScopeView` under the store's write lock, so concurrent
 * writers never expire or import on a stale view. The log-backed stores (workspace JSONL,
 * in-memory: `memoryLogAdapter` with its `log`) run it in `log.write`; the SQL stores (SQLite,
 * Postgres) in one database transaction (`writeScope`). Erasures are `erase` events whose lines
 * then lose their payload (the log's compaction; in the SQL stores, the same transaction): the
 * chain still verifies.
 *
 * `withRetention(adapter, config)` is what `memory()` (and `openMemoryStore`, the CLI, the
 * inspector) put in front of a store's adapter when the store has `retention` options.
 * See docs/memory-kinds-and-retention.md.
 */
import { z } from 'zod'
import { agentError } from '../errors.ts'
import { sha256Hex } from '../log/digest.ts'
import { describeTextProblem, findTextProblem, MAX_JSON_DEPTH } from '../text.ts'
import type { Workspace } from '../workspace/types.ts'
import { normalizeContent } from './dedupe.ts'
import { eraseCopies, erasureReach, type MemoryErasureCopies } from './erasure.ts'
import { currentInstant, isInstant, newRecordId, parseInstant, partitionKey, type MemoryEventDraft } from './records.ts'
import type { MemoryRetentionConfig } from './schemas.ts'
import { isScopeWriter, stateScopeView, type MemoryScopeBuild, type MemoryScopeView } from './scope-write.ts'
import { sameScope, validateScope } from './scope.ts'
import { eraseRecordVectors, type MemoryVectorStore } from './vectors-store.ts'
import type { MemoryLogStoreAdapter } from './stores/workspace-jsonl.ts'
import type { MemoryAudit, MemoryRecord, MemoryScope, MemorySearchQuery, MemoryStoreAdapter, MemoryTarget } from './types.ts'

/** `format` of an export file. */
export const MEMORY_EXPORT_FORMAT = 'vite-agent-memory/scope-export'

/** Reason written on the `delete` events of `maxItems` expiry. */
export const MAX_ITEMS_REASON = 'retention: maxItems'
/** Reason written on the `erase` events of `maxAge` expiry. */
export const MAX_AGE_REASON = 'retention: maxAge'

/** Writes through a store sweep `maxAge` at most this often per scope (milliseconds). */
export const AGE_SWEEP_INTERVAL_MS = 60_000

/**
 * A portable export of one store scope (`retention.export`): every record of the scope
 * in creation order, in any status, as `MemoryRecord`s. Written by {@link exportMemoryScope} and
 * `agent memory export`, read by {@link importMemoryScope} and `agent memory import --file`.
 * (The inspector's `exportScope` writes the same fields without `format` and `version`; import
 * accepts both.)
 */
export interface MemoryScopeExport {
  format: typeof MEMORY_EXPORT_FORMAT
  version: 1
  /** The agent the scope was exported from, when known. */
  agent?: string
  store: string
  scope: MemoryScope
  /** ISO 8601 instant of the export. */
  exportedAt: string
  records: MemoryRecord[]
}

/** Counts of {@link importMemoryScope}. */
export interface MemoryImportResult {
  /** Records written. */
  added: number
  /** Records whose id the target scope already holds (any status): not written again (re-importing a file adds nothing). */
  skipped: number
  /** Active records whose content the target scope already holds, active, in the same kind: not written. */
  duplicates: number
  /** Records written under a new id (derived from their id and the target scope) because their id belongs to another scope of the same log or was erased there. */
  renamed: number
  /** Records of the scope erased or expired by the store's retention right after the import. */
  expired: number
}

/** What {@link applyMemoryRetention} did. */
export interface MemoryRetentionResult {
  /** Ids soft-deleted (`maxItems` without `hardDelete`). */
  deleted: string[]
  /** Ids erased (`maxAge`, or `maxItems` with `hardDelete`). */
  erased: string[]
}

function isLogAdapter(adapter: MemoryStoreAdapter): adapter is MemoryLogStoreAdapter {
  const candidate = adapter as Partial<MemoryLogStoreAdapter>
  return typeof candidate.hardDelete === 'function' && typeof candidate.log === 'object' && candidate.log !== null && typeof candidate.log.write === 'function'
}

/** Where a store's scope writes go, and what follows an erasure there. */
interface ScopeWrites {
  /** One scope write (scope-write.ts); `wholeLog`: the build looks up ids of any scope (import). */
  write(target: MemoryTarget, build: MemoryScopeBuild, wholeLog?: boolean): Promise<MemoryRecord[]>
  /** After `erase` events: the log's compaction (the SQL stores compacted in the write). */
  compact(): Promise<void>
  /** Where other copies of erased text are looked for by default (the log's workspace). */
  workspace?: Workspace
  /** The log's own key, never scrubbed as a copy. */
  logKey?: string
  vectors?: MemoryVectorStore
  /** The object and key the `maxAge` sweep interval is kept under (one per log value, or per SQL adapter, and scope). */
  sweep: { holder: object; key: string }
}

/** The scope writes of `adapter`: its own `writeScope` (the SQL stores), else its memory log; `undefined` for a custom adapter. */
function scopeWritesOf(adapter: MemoryStoreAdapter): ScopeWrites | undefined {
  if (isScopeWriter(adapter)) {
    return { write: (target, build) => adapter.writeScope(target, build), compact: async () => {}, ...(adapter.vectors ? { vectors: adapter.vectors } : {}), sweep: { holder: adapter, key: '' } }
  }
  if (!isLogAdapter(adapter)) return undefined
  const { log } = adapter
  return {
    // Without `wholeLog`, only the target's partition is read (its checkpoint section, when not loaded yet).
    write: (target, build, wholeLog) => log.write(state => build(stateScopeView(state, target)), wholeLog ? undefined : { partitions: [partitionKey(target.store, target.scope)] }),
    compact: async () => { await log.compact() },
    workspace: log.workspace,
    logKey: log.key,
    ...(adapter.vectors ? { vectors: adapter.vectors } : {}),
    sweep: { holder: log.workspace, key: log.key },
  }
}

function requireScopeWrites(adapter: MemoryStoreAdapter, operation: string): ScopeWrites {
  const writes = scopeWritesOf(adapter)
  if (!writes) {
    throw agentError('MEMORY_RETENTION_UNSUPPORTED', `${operation} needs a log-backed or database memory store, and this adapter has neither a memory log nor writeScope`, 'use workspaceJsonlMemoryStore(), inMemoryMemoryStore(), sqliteMemoryStore() or postgresMemoryStore(), or leave the retention option out for a custom adapter', { operation })
  }
  return writes
}

function checkTarget(target: MemoryTarget): void {
  if (!target || typeof target.store !== 'string' || target.store === '') {
    throw agentError('MEMORY_TARGET_INVALID', 'the memory operation has no store name', 'pass the target as { store, scope } with the store\'s configured name')
  }
  validateScope(target.scope)
}

function checkAudit(audit: MemoryAudit | undefined): MemoryAudit {
  if (!audit || typeof audit !== 'object' || typeof audit.via !== 'string') {
    throw agentError('MEMORY_AUDIT_REQUIRED', 'the memory operation has no audit block with `via`', 'pass { audit: { via: "api" | "cli" | "import" | "retention", agent, user } }')
  }
  return audit
}

function eraseEvent(record: MemoryRecord, audit: MemoryAudit, at: string, reason: string | undefined): MemoryEventDraft {
  return { type: 'erase', recordId: record.id, store: record.store, scope: record.scope, version: record.version + 1, at, audit, ...(reason !== undefined ? { reason } : {}) }
}

/** Options of {@link eraseMemoryScope} and {@link hardDeleteMemoryRecord}. */
export interface MemoryErasureOptions {
  audit: MemoryAudit
  reason?: string
  /**
   * The workspace whose other copies (approvals, transcripts, history, leftovers) are erased too.
   * Default: the workspace of the store's log (for `workspaceJsonlMemoryStore()`, the agent's).
   * Give the agent workspace for an in-memory or SQLite store.
   */
  workspace?: Workspace
}

/** What an erasure removed: the records erased from the log and the copies rewritten or removed elsewhere. */
export interface MemoryErasureReport {
  /** Records erased from the log (their payload removed by compaction). */
  erased: number
  /** Ids of the erased records. */
  ids: string[]
  /** Copies outside the log (see {@link MemoryErasureCopies}). */
  copies: MemoryErasureCopies
}

/** The copies report of an erasure without a workspace to search. */
function noCopies(): MemoryErasureCopies {
  return { scrubbed: [], removed: [], denied: [], remaining: [], kept: [] }
}

/** An adapter that erases records itself but has no scope writes (a custom adapter with `hardDelete`). */
function isHardDeleteAdapter(adapter: MemoryStoreAdapter): adapter is MemoryStoreAdapter & Pick<MemoryLogStoreAdapter, 'hardDelete'> {
  return typeof (adapter as Partial<MemoryLogStoreAdapter>).hardDelete === 'function'
}

/** Erasure through the adapter's own `hardDelete`, one record at a time; copies are erased in `options.workspace` only (such a store has no workspace of its own). */
async function eraseByHardDelete(adapter: MemoryStoreAdapter & Pick<MemoryLogStoreAdapter, 'hardDelete'>, target: MemoryTarget, records: MemoryRecord[], options: MemoryErasureOptions): Promise<MemoryErasureReport> {
  const audit = checkAudit(options?.audit)
  const erased: MemoryRecord[] = []
  for (const record of records) {
    if (await adapter.hardDelete(target, record.id, { audit, ...(options.reason !== undefined ? { reason: options.reason } : {}) })) erased.push(record)
  }
  const copies = options.workspace ? await eraseCopies(options.workspace, erasureReach(erased)) : noCopies()
  return { erased: erased.length, ids: erased.map(record => record.id), copies }
}

async function eraseRecords(writes: ScopeWrites, target: MemoryTarget, pick: (view: MemoryScopeView) => Promise<MemoryRecord[]>, options: MemoryErasureOptions): Promise<MemoryErasureReport> {
  const audit = checkAudit(options?.audit)
  const at = currentInstant()
  let erased: MemoryRecord[] = []
  const written = await writes.write(target, async (view) => {
    erased = await pick(view)
    return erased.map(record => eraseEvent(record, audit, at, options.reason))
  })
  if (written.length === 0) erased = []
  if (written.length > 0) {
    await writes.compact()
    // The records' vectors go with them (the log's vector sidecar, or the store's table).
    if (writes.vectors) await eraseRecordVectors(writes.vectors, erased.map(record => record.id))
  }
  const workspace = options.workspace ?? writes.workspace
  const copies = workspace
    ? await eraseCopies(workspace, erasureReach(erased), writes.logKey !== undefined ? { logKey: writes.logKey } : {})
    : noCopies()
  return { erased: written.length, ids: erased.map(record => record.id), copies }
}

/**
 * Erases every record of one store scope, in any status (idempotent; returns the count of
 * records erased), so a scope can be wiped on request: one write of `erase` events, then one
 * compaction, so the content is gone from the log while the chain verifies; then every other
 * copy of the records' text in the workspace (approval inputs, transcripts, history, torn
 * leftovers, a stale checkpoint: see erasure.ts) is rewritten or removed, and the report says
 * which. Search, read, export and recall know none of the records afterwards, in the same
 * process at once. A second call erases 0 and writes nothing. Other scopes and stores of the log
 * are untouched.
 *
 * The SQL stores (SQLite, Postgres) write the `erase` events and strip the records' lines in one
 * transaction; they have no workspace of their own, so other copies are erased only in
 * `options.workspace` when given. A custom adapter with only `hardDelete` erases record by record.
 *
 * @throws AgentError `MEMORY_RETENTION_UNSUPPORTED` for an adapter with neither a memory log,
 * `writeScope` nor `hardDelete`, `MEMORY_TARGET_INVALID`, `MEMORY_SCOPE_*`, `MEMORY_AUDIT_REQUIRED`,
 * and the store's errors.
 */
export async function eraseMemoryScope(adapter: MemoryStoreAdapter, target: MemoryTarget, options: MemoryErasureOptions): Promise<MemoryErasureReport> {
  if (!scopeWritesOf(adapter) && isHardDeleteAdapter(adapter)) {
    checkTarget(target)
    return eraseByHardDelete(adapter, target, await adapter.export(target), options)
  }
  const writes = requireScopeWrites(adapter, 'Erasing a scope')
  checkTarget(target)
  return eraseRecords(writes, target, view => view.records(), options)
}

/**
 * Erases one record of the scope (any status), with every copy of its text, like
 * {@link eraseMemoryScope} for one id. `erased` is 0 for an unknown id or one of another scope.
 *
 * @throws as {@link eraseMemoryScope}.
 */
export async function hardDeleteMemoryRecord(adapter: MemoryStoreAdapter, target: MemoryTarget, id: string, options: MemoryErasureOptions): Promise<MemoryErasureReport> {
  if (!scopeWritesOf(adapter) && isHardDeleteAdapter(adapter)) {
    checkTarget(target)
    const record = await adapter.read(target, id)
    return eraseByHardDelete(adapter, target, record ? [record] : [], options)
  }
  const writes = requireScopeWrites(adapter, 'Erasing a record')
  checkTarget(target)
  return eraseRecords(writes, target, async (view) => {
    if (typeof id !== 'string') return []
    const record = (await view.lookup([id])).get(id)?.record
    return record && record.store === target.store && sameScope(record.scope, target.scope) ? [record] : []
  }, options)
}

/** Active, non-pinned records beyond `maxItems`, oldest first (`createdAt`, then creation order). */
async function overLimit(view: MemoryScopeView, maxItems: number): Promise<MemoryRecord[]> {
  // Every store counts active records: one cheap read when under the limit.
  const active = await view.activeCount()
  if (active <= maxItems) return []
  const candidates = (await view.records())
    .map((record, position) => ({ record, position, created: parseInstant(record.createdAt) ?? 0 }))
    .filter(entry => entry.record.status === 'active' && !entry.record.pinned)
    .sort((a, b) => a.created - b.created || a.position - b.position)
  return candidates.slice(0, active - maxItems).map(entry => entry.record)
}

/** Records of the scope (any status) created before `cutoff` (epoch ms). */
async function olderThan(view: MemoryScopeView, cutoff: number): Promise<MemoryRecord[]> {
  return (await view.records()).filter(record => (parseInstant(record.createdAt) ?? 0) < cutoff)
}

/**
 * Applies a store's retention to one scope now (the explicit "compact" call; writes
 * through a store with retention run it too):
 * 1. `maxAge`: every record created before `now - maxAge` (any status, pinned too) is erased;
 * 2. `maxItems`: while the scope has more active records than `maxItems`, the oldest non-pinned
 *    active record expires: a `delete` event with reason `retention: maxItems` (an `erase` with
 *    `hardDelete`). Pinned records never expire by `maxItems`.
 * Each step is one scope write computed on the current state under the store's write lock
 * (scope-write.ts); erasures are followed by one compaction (the SQL stores compact in the same
 * transaction). Custom adapters (neither a memory log nor `writeScope`) get `maxItems` through
 * `export` and `delete`; `maxAge` and `hardDelete` need a built-in store.
 *
 * @throws AgentError `MEMORY_RETENTION_UNSUPPORTED` (`maxAge`/`hardDelete` on a custom adapter),
 * `MEMORY_AUDIT_REQUIRED`, and the store's errors.
 */
export async function applyMemoryRetention(adapter: MemoryStoreAdapter, target: MemoryTarget, retention: Pick<MemoryRetentionConfig, 'maxItems' | 'maxAgeMs' | 'hardDelete'>, options: { audit: MemoryAudit; now?: Date }): Promise<MemoryRetentionResult> {
  checkTarget(target)
  const audit: MemoryAudit = { ...checkAudit(options?.audit), via: 'retention' }
  const now = options.now ?? new Date()
  const at = now.toISOString()
  const result: MemoryRetentionResult = { deleted: [], erased: [] }
  const writes = scopeWritesOf(adapter)
  if (!writes) {
    if (retention.maxAgeMs !== undefined || retention.hardDelete) requireScopeWrites(adapter, 'retention.maxAge and retention.hardDelete')
    if (retention.maxItems === undefined) return result
    const active = (await adapter.export(target)).map((record, position) => ({ record, position, created: parseInstant(record.createdAt) ?? 0 }))
      .filter(entry => entry.record.status === 'active')
    const expire = active.filter(entry => !entry.record.pinned).sort((a, b) => a.created - b.created || a.position - b.position).slice(0, Math.max(0, active.length - retention.maxItems))
    for (const { record } of expire) if (await adapter.delete(target, record.id, { audit, reason: MAX_ITEMS_REASON })) result.deleted.push(record.id)
    return result
  }
  if (retention.maxAgeMs !== undefined) {
    const cutoff = now.getTime() - retention.maxAgeMs
    const erased = await writes.write(target, async view => (await olderThan(view, cutoff)).map(record => eraseEvent(record, audit, at, MAX_AGE_REASON)))
    result.erased.push(...erased.map(record => record.id))
  }
  if (retention.maxItems !== undefined) {
    const maxItems = retention.maxItems
    const expired = await writes.write(target, async view => (await overLimit(view, maxItems)).map((record): MemoryEventDraft => retention.hardDelete
      ? eraseEvent(record, audit, at, MAX_ITEMS_REASON)
      : { type: 'delete', recordId: record.id, store: record.store, scope: record.scope, version: record.version + 1, at, audit, reason: MAX_ITEMS_REASON }))
    for (const record of expired) (retention.hardDelete ? result.erased : result.deleted).push(record.id)
  }
  if (result.erased.length > 0) {
    await writes.compact()
    if (writes.vectors) await eraseRecordVectors(writes.vectors, result.erased)
  }
  return result
}

// ---------------------------------------------------------------------------------------------
// The adapter a store with retention resolves to
// ---------------------------------------------------------------------------------------------

const retentionOfAdapter = new WeakMap<MemoryStoreAdapter, MemoryRetentionConfig>()
// Last maxAge sweep per log value (the workspace object holds the log's state) or SQL adapter, and scope.
const lastSweep = new WeakMap<object, Map<string, number>>()

/** The retention config of an adapter returned by {@link withRetention}; `undefined` for any other adapter. */
export function retentionOf(adapter: MemoryStoreAdapter): MemoryRetentionConfig | undefined {
  return retentionOfAdapter.get(adapter)
}

/**
 * Checks that `adapter` can carry `retention` (`maxAge` and `hardDelete` need a log-backed or
 * SQL store: a memory log or `writeScope`) and returns the adapter a store with retention uses:
 * - `search` and preflight recall only see records created at or after `now - maxAge` (the cut
 *   is an `after` filter, so it applies before the limit); `read` answers `undefined` and
 *   `export` leaves out older records: they stop being returned at once, before they are erased;
 * - `append` runs {@link applyMemoryRetention} after each record it writes (not after a
 *   duplicate): `maxItems` every time (O(1) while under the limit), `maxAge` at most once per
 *   {@link AGE_SWEEP_INTERVAL_MS} per scope and process;
 * - `delete` with `hardDelete` erases the record and every copy of its text
 *   ({@link hardDeleteMemoryRecord}) and returns it as it was, with `status: 'deleted'`.
 * Other members (`log`, `hardDelete`) pass through.
 *
 * @throws AgentError `MEMORY_RETENTION_UNSUPPORTED` when `maxAge` or `hardDelete` is set and the
 * adapter has neither a memory log nor `writeScope`.
 */
export function withRetention(adapter: MemoryStoreAdapter, retention: MemoryRetentionConfig, store = 'the store'): MemoryStoreAdapter {
  if ((retention.maxAgeMs !== undefined || retention.hardDelete) && !scopeWritesOf(adapter)) {
    throw agentError('MEMORY_RETENTION_UNSUPPORTED', `memory store "${store}" sets retention.${retention.hardDelete ? 'hardDelete' : 'maxAge'}, which needs a log-backed or database store, and its adapter has neither a memory log nor writeScope`, 'use workspaceJsonlMemoryStore(), inMemoryMemoryStore(), sqliteMemoryStore() or postgresMemoryStore(), or remove retention.maxAge and retention.hardDelete', { store })
  }
  const maxAge = retention.maxAgeMs
  const cutoff = () => (maxAge === undefined ? undefined : Date.now() - maxAge)
  const fresh = (record: MemoryRecord, limit: number | undefined) => limit === undefined || (parseInstant(record.createdAt) ?? 0) >= limit
  const wrapped: MemoryStoreAdapter = {
    ...adapter,
    async search(target, query) {
      const limit = cutoff()
      if (limit === undefined) return adapter.search(target, query)
      let narrowed: MemorySearchQuery = query
      // An invalid `after` is left for the adapter to reject (never silently replaced).
      if (query && (query.after === undefined || isInstant(query.after))) {
        const after = query.after === undefined ? limit : Math.max(limit, parseInstant(query.after)!)
        narrowed = { ...query, after: new Date(after).toISOString() }
      }
      return (await adapter.search(target, narrowed)).filter(hit => fresh(hit.record, limit))
    },
    async read(target, id) {
      const record = await adapter.read(target, id)
      return record && fresh(record, cutoff()) ? record : undefined
    },
    async export(target) {
      const limit = cutoff()
      return (await adapter.export(target)).filter(record => fresh(record, limit))
    },
    async append(target, input, options) {
      let duplicate = false
      const record = await adapter.append(target, input, { ...options, onDuplicate: (existing) => {
        duplicate = true
        options?.onDuplicate?.(existing)
      } })
      if (!duplicate) await enforce(adapter, target, retention, options.audit)
      return record
    },
    async delete(target, id, options) {
      if (!retention.hardDelete) return adapter.delete(target, id, options)
      const record = await adapter.read(target, id)
      if (!record || record.status === 'deleted') return undefined
      const erased = await hardDeleteMemoryRecord(adapter, target, id, options)
      if (erased.erased === 0) return undefined
      const at = currentInstant()
      return { ...record, status: 'deleted', deletedAt: at, updatedAt: at, version: record.version + 1, ...(options.reason !== undefined ? { deleteReason: options.reason } : {}) }
    },
  }
  retentionOfAdapter.set(wrapped, retention)
  return wrapped
}

async function enforce(adapter: MemoryStoreAdapter, target: MemoryTarget, retention: MemoryRetentionConfig, audit: MemoryAudit): Promise<MemoryRetentionResult> {
  let sweepAge = false
  const writes = retention.maxAgeMs !== undefined ? scopeWritesOf(adapter) : undefined
  if (writes) {
    let byScope = lastSweep.get(writes.sweep.holder)
    if (!byScope) lastSweep.set(writes.sweep.holder, byScope = new Map())
    const key = `${writes.sweep.key}\u0000${partitionKey(target.store, target.scope)}`
    const now = Date.now()
    const last = byScope.get(key)
    if (last === undefined || now - last >= AGE_SWEEP_INTERVAL_MS) {
      byScope.set(key, now)
      sweepAge = true
    }
  }
  if (retention.maxItems === undefined && !sweepAge) return { deleted: [], erased: [] }
  return applyMemoryRetention(adapter, target, { ...retention, ...(sweepAge ? {} : { maxAgeMs: undefined }) }, { audit })
}

/**
 * Applies the retention of a store resolved by `memory()`/`openMemoryStore` (an adapter from
 * {@link withRetention}) to one scope now: the explicit `compact` call (`maxAge` erasure does
 * not wait for the next write). Returns empty lists for a store without retention.
 */
export async function compactMemoryScope(adapter: MemoryStoreAdapter, target: MemoryTarget, options: { audit: MemoryAudit; now?: Date }): Promise<MemoryRetentionResult> {
  const retention = retentionOf(adapter)
  if (!retention) return { deleted: [], erased: [] }
  return applyMemoryRetention(adapter, target, retention, options)
}

// ---------------------------------------------------------------------------------------------
// Export and import
// ---------------------------------------------------------------------------------------------

/**
 * Exports one store scope as a {@link MemoryScopeExport} (`retention.export`): the
 * adapter's `export` (every record in creation order, any status; a store with `maxAge` leaves
 * out records past it). Works with any adapter. `retention.export: false` is checked by the
 * callers that know the store's options (`agent memory export`, the inspector).
 */
export async function exportMemoryScope(adapter: MemoryStoreAdapter, target: MemoryTarget, options: { agent?: string; now?: Date } = {}): Promise<MemoryScopeExport> {
  checkTarget(target)
  return {
    format: MEMORY_EXPORT_FORMAT,
    version: 1,
    ...(options.agent !== undefined ? { agent: options.agent } : {}),
    store: target.store,
    scope: { ...target.scope },
    exportedAt: (options.now ?? new Date()).toISOString(),
    records: await adapter.export(target),
  }
}

const instant = z.string().refine(isInstant, 'expected an ISO 8601 instant')
const text = z.string()
const exportedRecordSchema = z.object({
  id: z.string().min(1).max(128),
  store: z.string().optional(),
  scope: z.record(z.string(), z.string()).optional(),
  kind: z.string().min(1),
  content: text,
  title: text.optional(),
  tags: z.array(text),
  metadata: z.record(z.string(), z.unknown()),
  pinned: z.boolean(),
  confidence: z.number().min(0).max(1).optional(),
  episode: z.object({ observation: text, thoughts: text.optional(), action: text.optional(), result: text.optional() }).optional(),
  keywords: z.array(text).optional(),
  topics: z.array(text).optional(),
  supersedes: z.array(text),
  provenance: z.record(z.string(), z.unknown()),
  audit: z.looseObject({ via: z.string() }),
  createdAt: instant,
  occurredAt: instant.optional(),
  updatedAt: instant,
  version: z.number().int().min(1).max(3),
  status: z.enum(['active', 'superseded', 'deleted']),
  supersededBy: text.optional(),
  deletedAt: instant.optional(),
  deleteReason: text.optional(),
}).superRefine((record, context) => {
  // The versions a record can reach with remember, supersede and delete events.
  const expected = record.status === 'active' ? 1 : record.status === 'superseded' ? 2 : record.supersededBy !== undefined ? 3 : 2
  if (record.version !== expected) context.addIssue({ code: 'custom', message: `a ${record.status} record${record.status === 'deleted' && record.supersededBy ? ' that was superseded' : ''} has version ${expected}, not ${record.version}`, path: ['version'] })
  if (record.status === 'superseded' && record.supersededBy === undefined) context.addIssue({ code: 'custom', message: 'a superseded record needs supersededBy', path: ['supersededBy'] })
  if (record.status === 'active' && (record.supersededBy !== undefined || record.deletedAt !== undefined)) context.addIssue({ code: 'custom', message: 'an active record has no supersededBy or deletedAt', path: ['status'] })
  if (record.status === 'deleted' && record.deletedAt !== record.updatedAt) context.addIssue({ code: 'custom', message: 'a deleted record has deletedAt equal to updatedAt', path: ['deletedAt'] })
})

const exportFileSchema = z.object({
  format: z.literal(MEMORY_EXPORT_FORMAT).optional(),
  version: z.literal(1).optional(),
  agent: z.string().optional(),
  store: z.string().min(1),
  scope: z.record(z.string(), z.unknown()),
  exportedAt: instant.optional(),
  records: z.array(exportedRecordSchema),
})

/**
 * Checks an export file's parsed JSON and returns it typed (records keep only the fields of
 * {@link MemoryRecord}).
 *
 * @throws AgentError `MEMORY_IMPORT_INVALID` naming the first bad path, for example
 * `records.3.version`; nothing is written.
 */
export function parseMemoryScopeExport(value: unknown): MemoryScopeExport {
  // Before the schema: a lone surrogate is never imported, and deep nesting never overflows the stack.
  const problem = findTextProblem(value, MAX_JSON_DEPTH + 4)
  if (problem) throw agentError('MEMORY_IMPORT_INVALID', `the memory export was refused: ${describeTextProblem(problem)}`, 'fix the file (or export it again) and import it again; nothing was written', { path: problem.path })
  const parsed = exportFileSchema.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw agentError('MEMORY_IMPORT_INVALID', `the memory export is not valid at ${issue.path.length > 0 ? issue.path.join('.') : 'the top level'}: ${issue.message}`, 'pass a file written by `agent memory export` (or exportMemoryScope) unchanged', { path: issue.path.join('.'), issues: parsed.error.issues.slice(0, 10).map(i => ({ path: i.path.join('.'), message: i.message })) })
  }
  const data = parsed.data
  return { format: MEMORY_EXPORT_FORMAT, version: 1, ...(data.agent !== undefined ? { agent: data.agent } : {}), store: data.store, scope: data.scope as MemoryScope, exportedAt: data.exportedAt ?? new Date(0).toISOString(), records: data.records.map(record => ({ ...record, store: record.store ?? data.store, scope: (record.scope ?? data.scope) as MemoryScope }) as MemoryRecord) }
}

/** How many ids {@link placeRenamedIds} derives, one from the other, before it draws a random one. */
const MAX_DERIVED_IDS = 4

/**
 * The id each of `ids` (ids of the file that another scope holds, or that were erased) takes in the
 * target partition `partition`: `mem_` and 32 hex digits of the SHA-256 of the id and the
 * partition, derived again from that id while it too is another scope's (or erased). `present`:
 * the target already holds that id (an earlier import of the same file wrote it). After
 * {@link MAX_DERIVED_IDS} derivations, a random id.
 */
async function placeRenamedIds(view: MemoryScopeView, ids: readonly string[], partition: string, inTarget: (record: MemoryRecord | undefined) => boolean): Promise<Map<string, { id: string; present: boolean }>> {
  const placed = new Map<string, { id: string; present: boolean }>()
  let pending = [...new Set(ids)].map(id => ({ source: id, candidate: id }))
  for (let round = 0; round < MAX_DERIVED_IDS && pending.length > 0; round++) {
    for (const entry of pending) entry.candidate = `mem_${(await sha256Hex(`${entry.candidate}\u0000${partition}`)).slice(0, 32)}`
    const found = await view.lookup(pending.map(entry => entry.candidate))
    const next: typeof pending = []
    for (const entry of pending) {
      const stored = found.get(entry.candidate)
      if (stored === undefined) placed.set(entry.source, { id: entry.candidate, present: false })
      else if (inTarget(stored.record)) placed.set(entry.source, { id: entry.candidate, present: true })
      else next.push(entry)
    }
    pending = next
  }
  for (const entry of pending) placed.set(entry.source, { id: newRecordId(), present: false })
  return placed
}

/**
 * Imports an export file into `target` so that export then import into an empty workspace
 * reproduces the scope exactly (ids, timestamps, provenance, audit, status), as one
 * all-or-nothing scope write (a log-backed store's `log.write`, a SQL store's transaction). Each record becomes its events again: `remember`
 * (with the record's id, `createdAt` and every field), then `supersede` and `delete` events that
 * give it its status, version, `supersededBy`, `updatedAt`, `deletedAt` and `deleteReason`.
 * Every event carries `options.audit` (who imported it): the file's own `audit` block is kept as
 * `provenance.imported.audit` (with the file's `exportedAt` and `agent`), as a claim of the file,
 * never trusted as the approver. Everything else is reproduced exactly. Records keep the file's order.
 *
 * - A record whose id the target scope already has (any status) is skipped: re-importing a file
 *   adds nothing, and existing records are never changed.
 * - An active record whose content and kind the target scope already holds in an active record
 *   is skipped as a duplicate (references to it point to the existing record).
 * - A record whose id another scope of the same log holds (or held: erased) gets a new id,
 *   derived from its id and the target scope, so a second import of the file finds it (skipped);
 *   `supersedes` and `supersededBy` references follow it.
 * - The file's `store` and `scope` are not used: records go to `target`.
 * - Afterwards the store's retention (an adapter from {@link withRetention}) applies.
 *
 * @throws AgentError `MEMORY_IMPORT_INVALID` (bad file, or a `supersededBy` naming a record that
 * is neither in the file nor in the scope), `MEMORY_RETENTION_UNSUPPORTED` (custom adapter:
 * neither a memory log nor `writeScope`), `MEMORY_AUDIT_REQUIRED`, and the store's errors.
 */
export async function importMemoryScope(adapter: MemoryStoreAdapter, target: MemoryTarget, data: unknown, options: { audit: MemoryAudit }): Promise<MemoryImportResult> {
  const writes = requireScopeWrites(adapter, 'Importing a scope')
  checkTarget(target)
  const audit = checkAudit(options?.audit)
  const file = parseMemoryScopeExport(data)
  const result: MemoryImportResult = { added: 0, skipped: 0, duplicates: 0, renamed: 0, expired: 0 }
  const inTarget = (record: MemoryRecord | undefined) => record !== undefined && record.store === target.store && sameScope(record.scope, target.scope)
  await writes.write(target, async (view) => {
    Object.assign(result, { added: 0, skipped: 0, duplicates: 0, renamed: 0 })
    // Every id the file names, looked up once: its own ids (clashes) and the newer records it points to.
    const known = await view.lookup([...new Set(file.records.flatMap(record => (record.supersededBy !== undefined ? [record.id, record.supersededBy] : [record.id])))])
    // Ids another scope holds (or erased) are taken under ids derived from them and the target: the same on every import.
    const clashing = file.records.filter(record => !inTarget(known.get(record.id)?.record) && known.has(record.id)).map(record => record.id)
    const placed = await placeRenamedIds(view, clashing, partitionKey(target.store, target.scope), inTarget)
    const ids = new Map<string, string>()
    const written: MemoryRecord[] = []
    const taken = new Set<string>()
    // The active records this import writes, by kind and normalized content: a second one of the
    // file is a duplicate of the first, as of a record the scope held.
    const activeWritten = new Map<string, string>()
    for (const record of file.records) {
      const place = placed.get(record.id)
      const present = inTarget(known.get(record.id)?.record) ? record.id : place?.present ? place.id : undefined
      if (present !== undefined) {
        ids.set(record.id, present)
        result.skipped++
        continue
      }
      const contentOf = record.status === 'active' ? `${record.kind}\u0000${normalizeContent(record.content)}` : undefined
      if (contentOf !== undefined) {
        const duplicate = (await view.duplicate(record.kind, record.content))?.id ?? activeWritten.get(contentOf)
        if (duplicate !== undefined) {
          ids.set(record.id, duplicate)
          result.duplicates++
          continue
        }
      }
      let id = place?.id ?? record.id
      // The same id twice in the file: the second occurrence gets a new id.
      if (taken.has(id)) id = newRecordId()
      if (id !== record.id) result.renamed++
      taken.add(id)
      ids.set(record.id, id)
      if (contentOf !== undefined) activeWritten.set(contentOf, id)
      written.push(record)
    }
    const remembers: MemoryEventDraft[] = []
    const supersedes: MemoryEventDraft[] = []
    const deletes: MemoryEventDraft[] = []
    const missing: string[] = []
    for (const record of written) {
      const id = ids.get(record.id)!
      const head = { recordId: id, store: target.store, scope: target.scope }
      remembers.push({
        // The importer is the audit of the new record: the file's audit block is a claim of the
        // file (it could name any approver), kept as provenance and never trusted as an approval.
        type: 'remember', ...head, version: 1, at: record.version === 1 ? record.updatedAt : record.createdAt, audit,
        kind: record.kind, content: record.content,
        ...(record.title !== undefined ? { title: record.title } : {}),
        tags: record.tags, metadata: record.metadata, pinned: record.pinned,
        ...(record.confidence !== undefined ? { confidence: record.confidence } : {}),
        ...(record.episode !== undefined ? { episode: record.episode } : {}),
        ...(record.keywords !== undefined ? { keywords: record.keywords } : {}),
        ...(record.topics !== undefined ? { topics: record.topics } : {}),
        supersedes: record.supersedes.map(old => ids.get(old) ?? old),
        provenance: { ...record.provenance, imported: { audit: record.audit, exportedAt: file.exportedAt, ...(file.agent !== undefined ? { agent: file.agent } : {}) } },
        createdAt: record.createdAt,
        ...(record.occurredAt !== undefined ? { occurredAt: record.occurredAt } : {}),
      })
      if (record.supersededBy !== undefined) {
        const newer = ids.get(record.supersededBy) ?? (inTarget(known.get(record.supersededBy)?.record) ? record.supersededBy : undefined)
        if (newer === undefined) missing.push(record.id)
        else supersedes.push({ type: 'supersede', ...head, version: 2, at: record.updatedAt, audit, supersededBy: newer })
      }
      if (record.status === 'deleted') {
        deletes.push({ type: 'delete', ...head, version: record.version, at: record.updatedAt, audit, ...(record.deleteReason !== undefined ? { reason: record.deleteReason } : {}) })
      }
    }
    if (missing.length > 0) {
      throw agentError('MEMORY_IMPORT_INVALID', `the memory export has superseded records whose newer record is neither in the file nor in the scope: ${missing.slice(0, 5).map(id => `"${id}"`).join(', ')}${missing.length > 5 ? ', ...' : ''}`, 'export the whole scope again with `agent memory export` and import that file; nothing was written', { ids: missing })
    }
    result.added = written.length
    return [...remembers, ...supersedes, ...deletes]
  }, true)
  const retention = retentionOf(adapter)
  if (retention && (retention.maxItems !== undefined || retention.maxAgeMs !== undefined)) {
    const expired = await applyMemoryRetention(adapter, target, retention, { audit })
    result.expired = expired.deleted.length + expired.erased.length
  }
  return result
}

/**
 * The memory inspector: what the dev playground and the production handler show of an agent's
 * memory, always for one identity. Records come through the store adapter API (`export`,
 * `search`, `read`), so the inspector sees exactly what the agent's tools see for that user; the
 * raw log lines (store-log.ts: the workspace JSONL file, or a SQL store's event rows) are filtered
 * to the same store and scope.
 */
import { agentError } from '../errors.ts'
import type { MemoryCapability } from '../memory/capability.ts'
import { verifyLog, type MemoryLogVerification } from '../memory/event-log.ts'
import { openMemoryStore, type ResolvedMemoryStore } from '../memory/open-store.ts'
import { parseMemoryOptions, type MemoryStoreConfig } from '../memory/schemas.ts'
import type { AgentCapability, AgentDefinition } from '../agent/types.ts'
import type { MemoryRecord, MemoryScope, MemorySearchHit } from '../memory/types.ts'
import { keepsLog, storeLog } from './store-log.ts'
import { pageScopeLines, type InspectorLogLine } from './studio-log.ts'
import type { AgentIdentity } from './types.ts'

/** One memory store of an agent as seen by one identity. */
export interface InspectorStore {
  name: string
  /** Adapter kind (`workspace-jsonl`, `in-memory`, or `adapter` for a plain adapter object). */
  kind: string
  /** The scope resolved for this identity; `null` when the scope function switched the store off. */
  scope: MemoryScope | null
  writeMode: 'off' | 'tool'
  /** True when the store keeps an event log whose lines and digests can be shown and verified (a workspace JSONL file, or a SQLite or Postgres event table). */
  hasLog: boolean
}

export type { InspectorLogLine } from './studio-log.ts'

function memoryCapability(agent: AgentDefinition): MemoryCapability | undefined {
  return agent.capabilities.find((capability: AgentCapability): capability is MemoryCapability => capability.id === 'memory' && !!(capability as Partial<MemoryCapability>).options)
}

/** The parsed store options of the agent's `memory()` capability; none without it. */
export function storeConfigs(agent: AgentDefinition): MemoryStoreConfig[] {
  const capability = memoryCapability(agent)
  return capability ? parseMemoryOptions(capability.options) : []
}

function adapterKind(config: MemoryStoreConfig): string {
  const kind = (config.adapter as { kind?: unknown }).kind
  return typeof kind === 'string' ? kind : 'adapter'
}

/**
 * The agent's memory stores with the scope each resolves to for `identity` (the same resolution
 * an invocation makes). An agent without `memory()` has none.
 */
export async function listStores(agent: AgentDefinition, identity: AgentIdentity): Promise<InspectorStore[]> {
  const stores: InspectorStore[] = []
  for (const config of storeConfigs(agent)) {
    let scope: MemoryScope | null = null
    try {
      scope = (await openMemoryStore(agent, { user: identity, store: config.name, runId: 'inspector' })).target.scope
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'MEMORY_SCOPE_OFF') throw error
    }
    stores.push({ name: config.name, kind: adapterKind(config), scope, writeMode: config.writeMode, hasLog: keepsLog(agent, config) })
  }
  return stores
}

/**
 * Opens store `store` for `identity`.
 *
 * @throws `MEMORY_NOT_CONFIGURED`, `MEMORY_STORE_UNKNOWN`, `MEMORY_SCOPE_OFF` (from `openMemoryStore`).
 */
export function openStore(agent: AgentDefinition, identity: AgentIdentity, store: string): Promise<ResolvedMemoryStore> {
  return openMemoryStore(agent, { user: identity, store, runId: 'inspector' })
}

/** A page of records: `records` of `total`, from `offset`. */
export interface RecordPage {
  store: string
  scope: MemoryScope
  total: number
  offset: number
  limit: number
  records: MemoryRecord[]
}

/** Records of the identity's scope, newest first, filtered by status (`'all'` keeps every status). */
export async function pageRecords(opened: ResolvedMemoryStore, options: { status: 'active' | 'all' | 'superseded' | 'deleted'; offset: number; limit: number }): Promise<RecordPage> {
  const all = await opened.adapter.export(opened.target)
  const kept = all.filter(record => options.status === 'all' || record.status === options.status).reverse()
  return { store: opened.store, scope: opened.target.scope, total: kept.length, offset: options.offset, limit: options.limit, records: kept.slice(options.offset, options.offset + options.limit) }
}

/** Search in the identity's scope through the adapter (the same ranking `memory_search` uses). */
export function searchRecords(opened: ResolvedMemoryStore, query: string, limit: number): Promise<MemorySearchHit[]> {
  return opened.adapter.search(opened.target, { query, limit })
}

/** A record with its history: the events on it, the records it supersedes and the one that superseded it. */
export interface RecordDetail {
  record: MemoryRecord
  /** The log lines of this record (remember, supersede, delete), oldest first; empty for stores without a log. */
  events: InspectorLogLine[]
  /** Records this one supersedes (those of the same scope). */
  supersedes: MemoryRecord[]
  supersededBy?: MemoryRecord
}

function recordNotFound(id: string, store: string) {
  // Same answer for an unknown id and another scope's id, so ids of other users cannot be probed.
  return agentError('MEMORY_RECORD_NOT_FOUND', `there is no memory record "${id}" in store "${store}" for this user`, 'use an id from the records list or a search of this store', { id, store })
}

/**
 * One record of the identity's scope with its history.
 *
 * @throws `MEMORY_RECORD_NOT_FOUND` for an unknown id and for an id of another scope alike.
 */
export async function recordDetail(agent: AgentDefinition, opened: ResolvedMemoryStore, id: string): Promise<RecordDetail> {
  const record = await opened.adapter.read(opened.target, id)
  if (!record) throw recordNotFound(id, opened.store)
  const lines = (await scopeLogLines(agent, opened)) ?? []
  const supersedes: MemoryRecord[] = []
  for (const older of record.supersedes) {
    const found = await opened.adapter.read(opened.target, older)
    if (found) supersedes.push(found)
  }
  const supersededBy = record.supersededBy ? await opened.adapter.read(opened.target, record.supersededBy) : undefined
  return { record, events: lines.filter(line => line.recordId === id), supersedes, ...(supersededBy ? { supersededBy } : {}) }
}

function configOf(agent: AgentDefinition, store: string): MemoryStoreConfig {
  const config = storeConfigs(agent).find(candidate => candidate.name === store)
  if (!config) throw agentError('MEMORY_STORE_UNKNOWN', `the agent has no memory store named "${store}"`, 'use a store name from the stores list', { store })
  return config
}

/**
 * The complete lines of the store's log that belong to this store and scope, oldest first, or
 * `undefined` when the store keeps no log: the studio's parsed log (studio-log.ts), read once and
 * grown from its end. An unparseable line is left out here and reported by {@link verifyStoreLog}.
 */
export async function scopeLogLines(agent: AgentDefinition, opened: ResolvedMemoryStore): Promise<InspectorLogLine[] | undefined> {
  const log = await storeLog(agent, configOf(agent, opened.store))
  if (!log) return undefined
  return (await pageScopeLines(log.workspace, log.key, opened.store, opened.target.scope, { offset: 0, limit: Number.POSITIVE_INFINITY })).lines
}

/** Result of {@link verifyStoreLog}: `verifyLog` of the whole log plus where it is (a workspace key, or `event table` for a SQL store). */
export interface StoreLogVerification extends MemoryLogVerification {
  key: string
}

/** `MEMORY_LOG_UNAVAILABLE`: the store keeps no event log (an in-memory store, a plain adapter). */
export function noLog(store: string) {
  return agentError('MEMORY_LOG_UNAVAILABLE', `memory store "${store}" keeps no event log (an in-memory store or a plain adapter)`, 'lines and verification exist for workspaceJsonlMemoryStore(), sqliteMemoryStore() and postgresMemoryStore() stores', { store })
}

/**
 * Verifies the store's whole log (every line's JSON, `seq`, `prev`, digest and effect) with
 * `verifyLog`. The chain spans every scope, so the answer is about the whole file; it names a
 * line number but shows no other scope's content.
 *
 * @throws `MEMORY_LOG_UNAVAILABLE` for a store without a JSONL log.
 */
export async function verifyStoreLog(agent: AgentDefinition, opened: ResolvedMemoryStore): Promise<StoreLogVerification> {
  const log = await storeLog(agent, configOf(agent, opened.store))
  if (!log) throw noLog(opened.store)
  return { key: log.source === 'workspace' ? log.key : log.source, ...(await verifyLog(log.workspace, log.key)) }
}

/** Lines of the store's log for the identity's scope. @throws `MEMORY_LOG_UNAVAILABLE` without a log. */
export async function requireScopeLogLines(agent: AgentDefinition, opened: ResolvedMemoryStore): Promise<InspectorLogLine[]> {
  const lines = await scopeLogLines(agent, opened)
  if (!lines) throw noLog(opened.store)
  return lines
}

/** A scope exported as JSON: every record in creation order, in any status. */
export interface ScopeExport {
  agent: string
  store: string
  scope: MemoryScope
  exportedAt: string
  records: MemoryRecord[]
}

/**
 * Exports the identity's scope (adapter `export`).
 *
 * @throws `MEMORY_EXPORT_DISABLED` when the store sets `retention.export: false`.
 */
export async function exportScope(agent: AgentDefinition, opened: ResolvedMemoryStore): Promise<ScopeExport> {
  if (configOf(agent, opened.store).retention?.export === false) {
    throw agentError('MEMORY_EXPORT_DISABLED', `memory store "${opened.store}" has retention.export set to false`, 'enable export in the store options to export its scopes', { store: opened.store })
  }
  return { agent: agent.name, store: opened.store, scope: opened.target.scope, exportedAt: new Date().toISOString(), records: await opened.adapter.export(opened.target) }
}

/**
 * The memory tools over the stores that are active for one invocation: the four shared tools
 * (capability document) and the named tools of stores with `tools: 'named'` (slots document),
 * store selection, per-store write policies, approval reasons and fingerprints, and the compact
 * shapes the model gets back. Built by `memory()` (capability.ts) after it resolved adapters and
 * scopes.
 */
import { agentError } from '../errors.ts'
import type { AgentError } from '../errors.ts'
import type { AgentTool, AgentToolSet, ToolExecutionContext, ToolPolicy, ToolPolicyDecision } from '../agent/types.ts'
import {
  MEMORY_LIMITS,
  memoryDeleteInputSchema,
  memoryReadInputSchema,
  memoryRememberInputSchema,
  memorySearchInputSchema,
  slotRecallInputSchema,
  slotRememberInputSchema,
} from './schemas.ts'
import type { MemoryDeleteInput, MemoryReadInput, MemoryRememberInput, MemorySearchInput, SlotRecallInput, SlotRememberInput } from './schemas.ts'
import { defaultMemoryFilter } from './quality.ts'
import type { EmbeddingModel } from 'ai'
import { hybridSearch } from './hybrid-search.ts'
import { embedWrittenRecords } from './embeddings.ts'
import { searchWithEventTime } from './event-time.ts'
import { snippetOf } from '../search/snippet.ts'
import { tokenize } from '../search/text.ts'
import { normalizeContent } from './dedupe.ts'
import type { MemoryAudit, MemoryEnrich, MemoryEpisode, MemoryFusionOptions, MemoryProvenance, MemoryRecord, MemoryScope, MemorySearchHit, MemorySearchQuery, MemoryStoreAdapter, MemoryTarget, MemoryWriteCandidate, MemoryWriteFilter } from './types.ts'

/** A store that is on for this invocation: adapter created, scope resolved and validated. */
export interface ActiveMemoryStore {
  name: string
  adapter: MemoryStoreAdapter
  scope: MemoryScope
  /** `undefined` = all kinds; `[]` = none. */
  allowKinds: readonly string[] | undefined
  search: boolean
  read: boolean
  writeMode: 'off' | 'tool'
  writePolicy: ToolPolicy
  /** `search.mode` of the store; default `'ranked'`. */
  searchMode?: 'ranked' | 'substring'
  /** `embed` of the store: hybrid search when set. */
  embed?: EmbeddingModel
  /** `search.fusion` of the store: the hybrid fusion settings given. */
  fusion?: MemoryFusionOptions
  /** `write.maxContentLength`; default `MEMORY_LIMITS.contentChars`. */
  maxContentLength?: number
  /** `write.filter`: a function, or `false` for none; absent = {@link defaultMemoryFilter}. */
  writeFilter?: MemoryWriteFilter | false
  /** `description` of the store, added to its tool descriptions. */
  description?: string
  /** `tools` of the store; absent = `'shared'`. */
  tools?: 'shared' | 'named'
  /** Default `limit` of `recall_<store>` (`recall.maxItems`, default 10). */
  recallItems?: number
  /** `write.enrich` (keywords/topics, hosted-memory document). */
  enrich?: MemoryEnrich
  /** `retention.hardDelete`: the adapter's delete erases (the tool says so in its result). */
  hardDelete?: boolean
}

/** What a tool needs the store to allow. */
export type MemoryOperation = 'search' | 'read' | 'write'

const TOOL_OF: Record<MemoryOperation, string> = { search: 'memory_search', read: 'memory_read', write: 'memory_remember and memory_delete' }

/** Whether `store` offers `operation` (search/read flags, or `write.mode: 'tool'`). */
export function storeAllows(store: ActiveMemoryStore, operation: MemoryOperation): boolean {
  if (operation === 'write') return store.writeMode === 'tool'
  return operation === 'search' ? store.search : store.read
}

function quoteList(names: readonly string[]): string {
  return names.map((n) => `"${n}"`).join(', ')
}

/**
 * Picks the store of one call (source: "The Agent can omit `store` when the Capability has one
 * store or a store named `agent`. Otherwise it must pass `store`.").
 *
 * - `requested` given: it must be an active store (else `MEMORY_STORE_UNKNOWN`, listing the stores
 *   offering the operation) that allows the operation (else `MEMORY_OPERATION_NOT_ALLOWED`).
 *   A store switched off for the run (scope function returned `undefined`) is unknown.
 * - omitted: the only store offering the operation, else the store named `agent` if it offers it,
 *   else `MEMORY_STORE_REQUIRED` listing the choices.
 */
export function selectStore(stores: readonly ActiveMemoryStore[], operation: MemoryOperation, requested: string | undefined): ActiveMemoryStore {
  const offering = stores.filter((s) => storeAllows(s, operation))
  const names = offering.map((s) => s.name)
  if (requested !== undefined) {
    const store = stores.find((s) => s.name === requested)
    if (!store) {
      throw agentError('MEMORY_STORE_UNKNOWN', `there is no memory store "${requested}" for ${TOOL_OF[operation]} in this run`, names.length === 1 ? `omit \`store\` or pass "${names[0]}"` : `pass one of ${quoteList(names)}`, { store: requested, available: names })
    }
    if (!storeAllows(store, operation)) {
      throw agentError('MEMORY_OPERATION_NOT_ALLOWED', `memory store "${requested}" does not allow ${TOOL_OF[operation]}`, names.length > 0 ? `use one of ${quoteList(names)} for ${TOOL_OF[operation]}` : `do not call ${TOOL_OF[operation]}`, { store: requested, available: names })
    }
    return store
  }
  if (offering.length === 1) return offering[0]!
  const agentStore = offering.find((s) => s.name === 'agent')
  if (agentStore) return agentStore
  throw agentError('MEMORY_STORE_REQUIRED', `${TOOL_OF[operation]} can use several memory stores and none is named "agent"`, `pass \`store\` as one of ${quoteList(names)}`, { available: names })
}

function requestedStore(input: unknown): string | undefined {
  const store = typeof input === 'object' && input !== null ? (input as { store?: unknown }).store : undefined
  return typeof store === 'string' ? store : undefined
}

/** Model-facing summary of a record in search results (source: memory_search result shape). */
export interface MemorySearchResultItem {
  id: string
  kind: string
  title?: string
  content: string
  tags: string[]
  score: number
  createdAt: string
  /** When the remembered thing happened, when the record has it. */
  occurredAt?: string
  pinned: boolean
  /** Ranked search: the content around the best match, when the content is longer than it. */
  snippet?: string
  /** Hosted-memory document fields, when the record has them. */
  episode?: MemoryEpisode
  keywords?: string[]
  topics?: string[]
}

/** Model-facing record returned by `memory_read`: everything except the store, scope, audit and delete fields. */
export type MemoryReadResultRecord = Omit<MemoryRecord, 'store' | 'scope' | 'audit' | 'status' | 'deletedAt' | 'deleteReason'> & {
  /** A deleted record answers as not found, so a read result is never `deleted`. */
  status: 'active' | 'superseded'
}

/** Model-facing summary of a created record (content omitted: the model just wrote it). */
export interface MemoryCreatedRecord {
  id: string
  kind: string
  title?: string
  tags: string[]
  pinned: boolean
  confidence?: number
  keywords?: string[]
  topics?: string[]
  recallTriggers?: string[]
  supersedes: string[]
  version: number
  createdAt: string
  occurredAt?: string
}

function withOptional<T extends object>(base: T, extra: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) }
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) out[key] = value
  return out as T
}

function readResult(record: MemoryRecord): MemoryReadResultRecord {
  return withOptional<MemoryReadResultRecord>({
    id: record.id, kind: record.kind, content: record.content, tags: record.tags, metadata: record.metadata, pinned: record.pinned,
    status: record.status === 'superseded' ? 'superseded' : 'active', version: record.version, supersedes: record.supersedes,
    provenance: record.provenance, createdAt: record.createdAt, updatedAt: record.updatedAt,
  }, { title: record.title, confidence: record.confidence, episode: record.episode, keywords: record.keywords, topics: record.topics, rawExtract: record.rawExtract, recallTriggers: record.recallTriggers, supersededBy: record.supersededBy, occurredAt: record.occurredAt })
}

function createdResult(record: MemoryRecord): MemoryCreatedRecord {
  return withOptional<MemoryCreatedRecord>({
    id: record.id, kind: record.kind, tags: record.tags, pinned: record.pinned, supersedes: record.supersedes,
    version: record.version, createdAt: record.createdAt,
  }, { title: record.title, confidence: record.confidence, keywords: record.keywords, topics: record.topics, recallTriggers: record.recallTriggers, occurredAt: record.occurredAt })
}

function notFound(store: ActiveMemoryStore, id: string) {
  // One message for unknown, other-scope and deleted ids, so that the answer leaks nothing.
  return agentError('MEMORY_RECORD_NOT_FOUND', `memory store "${store.name}" has no record "${id}"`, 'use an id returned by memory_search or memory_remember in this store', { store: store.name, id })
}

function targetOf(store: ActiveMemoryStore): MemoryTarget {
  return { store: store.name, scope: { ...store.scope } }
}

/** Host-written audit of a tool write; never taken from model input. */
function auditOf(context: ToolExecutionContext): MemoryAudit {
  return withOptional<MemoryAudit>({ via: 'tool' }, {
    agent: context.agent, runId: context.runId, threadId: context.threadId, user: context.user?.id, approver: context.approval?.approver,
    approvalReason: context.approval?.reason,
  })
}

function preview(text: string, max = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

/** The fingerprint of records a write acts on: their version and status, or `absent`. */
async function recordsFingerprint(store: ActiveMemoryStore, ids: readonly string[]): Promise<string> {
  const parts = await Promise.all(ids.map(async (id) => {
    const record = await store.adapter.read(targetOf(store), id)
    return `${id}@${record ? `${record.version}:${record.status}` : 'absent'}`
  }))
  return `${store.name}/${parts.join(',')}`
}

/**
 * Whether a validated write input is bound to fail in `execute` (checked before asking for
 * approval). A scope that cannot be read (a log with a corrupt line, a database that fails) fails
 * every write: execute then raises that store's error instead of the user approving in vain.
 */
async function writeCannotSucceed(store: ActiveMemoryStore, tool: string, input: unknown, context: ToolExecutionContext): Promise<boolean> {
  try {
    return await writeBoundToFail(store, tool, input, context)
  }
  catch {
    return true
  }
}

async function writeBoundToFail(store: ActiveMemoryStore, tool: string, input: unknown, context: ToolExecutionContext): Promise<boolean> {
  if (tool === 'memory_remember' || tool === `remember_${store.name}`) {
    const { kind, supersedes } = input as Partial<MemoryRememberInput>
    if (store.allowKinds !== undefined && typeof kind === 'string' && !store.allowKinds.includes(kind)) return true
    // The quality filter runs before approval (a rejected write is never put to the user).
    if (await qualityRejection(store, input as MemoryRememberInput, context)) return true
    if (supersedes !== undefined && supersedes.length > 0) return !(await allActive(store, supersedes))
    // Nothing superseded: the scope is still read (an id no record has), and a read that throws fails the write.
    await store.adapter.read(targetOf(store), SCOPE_PROBE_ID)
    return false
  }
  if (tool === 'memory_delete') {
    // Active and superseded records can be deleted (memory_read still shows a superseded one); deleted and unknown ids cannot.
    const { id } = input as Partial<MemoryDeleteInput>
    if (typeof id !== 'string') return false
    const record = await store.adapter.read(targetOf(store), id)
    return record === undefined || record.status === 'deleted'
  }
  return false
}

/** An id no record has: reading it opens the scope and nothing else. */
const SCOPE_PROBE_ID = 'mem_scope_probe'

async function allActive(store: ActiveMemoryStore, ids: readonly string[]): Promise<boolean> {
  const records = await Promise.all(ids.map((id) => store.adapter.read(targetOf(store), id)))
  return records.every((record) => record?.status === 'active')
}

function candidateOf(store: ActiveMemoryStore, input: MemoryRememberInput): MemoryWriteCandidate {
  return withOptional<MemoryWriteCandidate>({
    store: store.name, kind: input.kind, content: input.content, tags: input.tags ?? [], metadata: input.metadata ?? {}, pinned: input.pinned ?? false,
    keywords: input.keywords ?? [], topics: input.topics ?? [], recallTriggers: input.recallTriggers ?? [],
  }, { title: input.title, confidence: input.confidence, episode: input.episode, rawExtract: input.rawExtract })
}

/**
 * The built-in quality checks and the store's `write.filter` (hosted-memory document, quality filter), in this
 * order: content with no visible character after normalization (white space and format
 * characters such as zero-width spaces only) is `MEMORY_CONTENT_EMPTY`; content longer than
 * `write.maxContentLength` is `MEMORY_CONTENT_TOO_LONG`; a `{ reject: reason }` from the filter is
 * `MEMORY_WRITE_REJECTED` (the reason is in the message); a filter that throws or answers
 * something else is `MEMORY_WRITE_FILTER_FAILED`. `undefined` when the write may go on.
 */
async function qualityRejection(store: ActiveMemoryStore, input: MemoryRememberInput, context: ToolExecutionContext): Promise<AgentError | undefined> {
  const details = { store: store.name }
  if (typeof input.content !== 'string') return undefined
  if (normalizeContent(input.content) === '') {
    return agentError('MEMORY_CONTENT_EMPTY', `the content for memory store "${store.name}" has no visible text (only white space or invisible characters)`, 'pass the fact to remember as plain text in `content`; nothing was saved', details)
  }
  const max = store.maxContentLength ?? MEMORY_LIMITS.contentChars
  if (input.content.length > max) {
    return agentError('MEMORY_CONTENT_TOO_LONG', `the content is ${input.content.length.toLocaleString('en-US')} characters and memory store "${store.name}" takes at most ${max.toLocaleString('en-US')}`, 'remember a shorter summary, or split it into several records; nothing was saved', { ...details, length: input.content.length, maxContentLength: max })
  }
  if (store.writeFilter === false) return undefined
  const filter = store.writeFilter ?? defaultMemoryFilter
  let verdict: unknown
  try {
    verdict = await filter(candidateOf(store, input), withOptional({
      store: store.name, scope: { ...store.scope }, agent: context.agent, runId: context.runId, threadId: context.threadId,
    }, { user: context.user }))
  } catch (error) {
    return agentError('MEMORY_WRITE_FILTER_FAILED', `the quality filter of memory store "${store.name}" failed: ${error instanceof Error ? error.message : String(error)}`, 'nothing was saved; try again later or tell the user the memory could not be saved', details, error)
  }
  if (verdict === undefined || verdict === 'accept' || verdict === true) return undefined
  if (typeof verdict === 'object' && verdict !== null && typeof (verdict as { reject?: unknown }).reject === 'string') {
    const reason = (verdict as { reject: string }).reject
    return agentError('MEMORY_WRITE_REJECTED', `memory store "${store.name}" rejected the record: ${reason}`, 'do not retry the same content; remember only a specific, lasting fact, changed as the reason says, or nothing; nothing was saved', { ...details, reason })
  }
  if (verdict === false) {
    return agentError('MEMORY_WRITE_REJECTED', `memory store "${store.name}" rejected the record`, 'do not retry the same content; remember only a specific, lasting fact, or nothing; nothing was saved', details)
  }
  return agentError('MEMORY_WRITE_FILTER_FAILED', `the quality filter of memory store "${store.name}" answered ${JSON.stringify(verdict)}, not "accept" or { reject: reason }`, 'nothing was saved; tell the user the memory could not be saved', details)
}

/** Keeps valid, distinct (case-insensitive) entries within the limits, `given` first. */
function mergeTerms(given: readonly string[], added: unknown, max: number): string[] {
  const out: string[] = []
  const seen = new Set<string>()
  for (const item of [...given, ...(Array.isArray(added) ? added : [])]) {
    if (typeof item !== 'string') continue
    const value = item.trim()
    if (value === '' || value.length > MEMORY_LIMITS.keywordChars || seen.has(value.toLowerCase())) continue
    seen.add(value.toLowerCase())
    out.push(value)
    if (out.length === max) break
  }
  return out
}

/** Runs `write.enrich`: keywords and topics merged with the model's; a failure is a warning, never a lost write. */
async function enriched(store: ActiveMemoryStore, input: MemoryRememberInput): Promise<{ keywords?: string[]; topics?: string[]; warning?: string }> {
  const base = withOptional<{ keywords?: string[]; topics?: string[] }>({}, { keywords: input.keywords, topics: input.topics })
  if (!store.enrich) return base
  let extra: unknown
  try {
    extra = await store.enrich(candidateOf(store, input))
  } catch (error) {
    return { ...base, warning: `enrich failed (${error instanceof Error ? error.message : String(error)}): saved without generated keywords and topics` }
  }
  if (extra === undefined) return base
  const value = extra as { keywords?: unknown; topics?: unknown }
  if (typeof extra !== 'object' || extra === null || (value.keywords !== undefined && !Array.isArray(value.keywords)) || (value.topics !== undefined && !Array.isArray(value.topics))) {
    return { ...base, warning: 'enrich returned no { keywords?, topics? } lists: saved without generated keywords and topics' }
  }
  const keywords = mergeTerms(input.keywords ?? [], value.keywords, MEMORY_LIMITS.keywords)
  const topics = mergeTerms(input.topics ?? [], value.topics, MEMORY_LIMITS.topics)
  return withOptional({}, { keywords: keywords.length > 0 ? keywords : undefined, topics: topics.length > 0 ? topics : undefined })
}

/** A policy function returning the selected store's write policy; selection errors are left to `execute`. */
function writePolicy(stores: readonly ActiveMemoryStore[]): ToolPolicy {
  return async (call): Promise<ToolPolicyDecision> => {
    let store: ActiveMemoryStore
    try {
      store = selectStore(stores, 'write', requestedStore(call.input))
    } catch {
      return 'allow' // execute raises the selection error as a tool error
    }
    // A write that can never succeed (a kind the store does not accept, a delete or supersede of a
    // record that is not active in the scope) is not put to the user: execute raises its error at
    // once instead of asking to approve a write that would fail anyway.
    const decision = typeof store.writePolicy === 'function' ? await store.writePolicy(call) : store.writePolicy
    if (decision === 'require-approval' && (await writeCannotSucceed(store, call.tool, call.input, call.context))) return 'allow'
    return decision
  }
}

function describeStores(stores: readonly ActiveMemoryStore[], operation: MemoryOperation): string {
  const offering = stores.filter((s) => storeAllows(s, operation))
  const names = offering.map((s) => s.name)
  const omit = names.length === 1 || names.includes('agent')
  const listed = offering.map((s) => (s.description ? `"${s.name}" (${s.description})` : `"${s.name}"`)).join(', ')
  return `Stores: ${listed}.${omit ? ` \`store\` may be omitted (default "${names.length === 1 ? names[0] : 'agent'}").` : ' Pass `store`.'}`
}

/** The memory_search description: ranked wording unless every searchable store uses the substring rule. */
function searchDescription(stores: readonly ActiveMemoryStore[]): string {
  const searchable = stores.filter((s) => storeAllows(s, 'search'))
  if (searchable.length > 0 && searchable.every((s) => s.searchMode === 'substring')) {
    return `Search durable memory records: finds records whose title, content or tags contain \`query\` as one phrase (case-insensitive), most occurrences first. Pass a short phrase such as "green tea", not a whole question; search again with another phrase when nothing comes back. ${describeStores(stores, 'search')}`
  }
  return `Search durable memory records by relevance: pass the words or the question you are looking for (for example "what tea does the user like"); records are ranked by how well their title, content and tags match (word forms, accents and small misspellings are tolerated), and records containing \`query\` as one phrase are always included. Search again with other words when nothing relevant comes back. ${describeStores(stores, 'search')}`
}

/**
 * One search of an active store, as `memory_search` and preflight recall run it: hybrid
 * (full-text fused with vectors) when the store has `embed`, else the adapter's
 * search; `occurredAfter` / `occurredBefore` honoured for every adapter (event-time.ts).
 */
export async function searchStore(store: ActiveMemoryStore, query: MemorySearchQuery, signal?: AbortSignal, onVectorFailure?: (error: unknown) => void): Promise<MemorySearchHit[]> {
  if (store.embed && store.searchMode !== 'substring') {
    return hybridSearch(store.adapter, targetOf(store), query, { ...store.fusion, model: store.embed, ...(signal ? { abortSignal: signal } : {}), ...(onVectorFailure ? { onVectorFailure } : {}) })
  }
  return searchWithEventTime(store.adapter, targetOf(store), query)
}

function searchTool(stores: readonly ActiveMemoryStore[]): AgentTool<typeof memorySearchInputSchema> {
  return {
    description: searchDescription(stores),
    inputSchema: memorySearchInputSchema,
    policy: 'allow',
    async execute(input: MemorySearchInput, context: ToolExecutionContext) {
      const store = selectStore(stores, 'search', input.store)
      const query = withOptional({ query: input.query, limit: input.limit }, {
        kinds: input.kinds, tags: input.tags, keywords: input.keywords, topics: input.topics, after: input.after, before: input.before,
        occurredAfter: input.occurredAfter, occurredBefore: input.occurredBefore,
        mode: store.searchMode === 'substring' ? 'substring' as const : undefined,
      })
      let vectorFailure: unknown
      const hits = await searchStore(store, query, context.signal, (error) => { vectorFailure = error })
      const terms = new Set(tokenize(input.query))
      const results = hits.slice(0, input.limit).map(({ record, score, snippet }) => {
        // Adapters may drop the index's snippet: compute it here for ranked results.
        const shown = store.searchMode === 'substring' ? undefined : snippet ?? snippetOf(record.content, terms, input.query.toLowerCase())
        return withOptional<MemorySearchResultItem>({
          id: record.id, kind: record.kind, content: record.content, tags: record.tags, score, createdAt: record.createdAt, pinned: record.pinned,
        }, { occurredAt: record.occurredAt, title: record.title, snippet: shown !== undefined && shown !== record.content ? shown : undefined, episode: record.episode, keywords: record.keywords, topics: record.topics })
      })
      // The model learns that meaning-based matching was off for this search, and may search again with other words.
      const warnings = vectorFailure === undefined ? {} : { warnings: [`semantic search failed (${vectorFailure instanceof Error ? vectorFailure.message : String(vectorFailure)}): these are full-text results only`] }
      return { store: store.name, results, ...warnings }
    },
  }
}

/** `memory_read`: deleted records answer `MEMORY_RECORD_NOT_FOUND` like unknown and other-scope ids (fault class "Deleted but still recalled"). */
function readTool(stores: readonly ActiveMemoryStore[]): AgentTool<typeof memoryReadInputSchema> {
  return {
    description: `Read one memory record by its exact id. A superseded record comes back with status "superseded" and supersededBy; a deleted or unknown id is not found. ${describeStores(stores, 'read')}`,
    inputSchema: memoryReadInputSchema,
    policy: 'allow',
    async execute(input: MemoryReadInput) {
      const store = selectStore(stores, 'read', input.store)
      const record = await store.adapter.read(targetOf(store), input.id)
      if (!record || record.status === 'deleted') throw notFound(store, input.id)
      return { store: store.name, record: readResult(record) }
    },
  }
}

function rememberTool(stores: readonly ActiveMemoryStore[]): AgentTool<typeof memoryRememberInputSchema> {
  return {
    description: `Save a durable memory record (a fact, event, procedure or profile detail) for later runs. Content the store already holds in the same kind (ignoring case and spacing) is not saved twice: the result then says action "duplicate". For kind "episodic", put the experience in \`episode\` (observation, thoughts, action, result). ${describeStores(stores, 'write')}`,
    inputSchema: memoryRememberInputSchema,
    policy: writePolicy(stores),
    approvalReason(input: MemoryRememberInput) {
      const store = selectStore(stores, 'write', input.store)
      const supersedes = input.supersedes?.length ? `, superseding ${quoteList(input.supersedes)}` : ''
      return `Remember in store "${store.name}" (kind ${input.kind}): "${preview(input.content)}"${supersedes}`
    },
    async approvalFingerprint(input: MemoryRememberInput) {
      if (!input.supersedes?.length) return undefined
      const store = selectStore(stores, 'write', input.store)
      return recordsFingerprint(store, input.supersedes)
    },
    async execute(input: MemoryRememberInput, context: ToolExecutionContext) {
      return rememberInto(selectStore(stores, 'write', input.store), input, context, 'memory_remember')
    },
  }
}

/**
 * One tool write of a record into `store`: allowed kinds, the quality checks and filter, enrich,
 * provenance defaults (`toolName` is the calling tool), duplicate suppression. Shared by
 * `memory_remember` and `remember_<store>`.
 */
async function rememberInto(store: ActiveMemoryStore, input: MemoryRememberInput, context: ToolExecutionContext, toolName: string) {
      if (store.allowKinds !== undefined && !store.allowKinds.includes(input.kind)) {
        const allowed = store.allowKinds
        throw agentError('MEMORY_KIND_NOT_ALLOWED', `memory store "${store.name}" does not accept kind "${input.kind}"`,
          allowed.length > 0 ? `use one of the kinds ${quoteList(allowed)}` : `this store accepts no kinds: do not remember into "${store.name}"`,
          { store: store.name, kind: input.kind, allowKinds: [...allowed] })
      }
      const rejection = await qualityRejection(store, input, context)
      if (rejection) throw rejection
      const { warning, ...metadataTerms } = await enriched(store, input)
      // Defaults first, then the model's fields: documented as replaceable, hence not trusted (audit is).
      const provenance: MemoryProvenance = {
        runId: context.runId, threadId: context.threadId, source: 'tool', toolName, ...input.provenance,
      }
      let duplicate = false
      const record = await store.adapter.append(targetOf(store), withOptional({ kind: input.kind, content: input.content, provenance }, {
        title: input.title, tags: input.tags, metadata: input.metadata, pinned: input.pinned, confidence: input.confidence,
        episode: input.episode, keywords: metadataTerms.keywords, topics: metadataTerms.topics,
        rawExtract: input.rawExtract, recallTriggers: input.recallTriggers,
        supersedes: input.supersedes ? [...new Set(input.supersedes)] : undefined, occurredAt: input.occurredAt,
      }), { audit: auditOf(context), duplicates: 'skip', onDuplicate: () => { duplicate = true } })
      // The vector is computed with the write; a failed embedding never fails the write (the next search retries it).
      const embedWarning = !duplicate && store.embed && store.searchMode !== 'substring' ? await embedWrittenRecords(store.adapter, targetOf(store), [record], store.embed) : undefined
      const all = [warning, embedWarning].filter((item): item is string => item !== undefined)
      const warnings = all.length > 0 ? { warnings: all } : {}
      if (duplicate) {
        return { action: 'duplicate' as const, store: store.name, record: createdResult(record), note: `memory store "${store.name}" already has this content as an active ${record.kind} record; nothing was saved`, ...warnings }
      }
      return { action: 'created' as const, store: store.name, record: createdResult(record), ...warnings }
}

function deleteTool(stores: readonly ActiveMemoryStore[]): AgentTool<typeof memoryDeleteInputSchema> {
  return {
    description: `Delete a memory record by id (it stops appearing in search and read; ${stores.some(s => s.hardDelete && storeAllows(s, 'write')) ? 'stores with hard delete erase its content, others keep it in the log' : 'soft delete: the log keeps it'}). ${describeStores(stores, 'write')}`,
    inputSchema: memoryDeleteInputSchema,
    policy: writePolicy(stores),
    async approvalReason(input: MemoryDeleteInput) {
      const store = selectStore(stores, 'write', input.store)
      const record = await store.adapter.read(targetOf(store), input.id)
      const what = record && record.status !== 'deleted' ? ` (${record.kind}): "${preview(record.content)}"` : ''
      return `Delete record "${input.id}" from store "${store.name}"${what}${input.reason ? `. Reason: ${preview(input.reason)}` : ''}`
    },
    async approvalFingerprint(input: MemoryDeleteInput) {
      const store = selectStore(stores, 'write', input.store)
      return recordsFingerprint(store, [input.id])
    },
    async execute(input: MemoryDeleteInput, context: ToolExecutionContext) {
      const store = selectStore(stores, 'write', input.store)
      const target = targetOf(store)
      // A second delete answers like an unknown id, whatever the adapter does with it.
      const current = await store.adapter.read(target, input.id)
      if (!current || current.status === 'deleted') throw notFound(store, input.id)
      const deleted = await store.adapter.delete(target, input.id, withOptional({ audit: auditOf(context) }, { reason: input.reason }))
      if (!deleted) throw notFound(store, input.id)
      return withOptional({ action: 'deleted' as const, store: store.name, id: input.id }, { reason: input.reason, erased: store.hardDelete ? true : undefined })
    },
  }
}

/**
 * The memory tools for the active stores, each present only when some store allows it (source:
 * the "Added when" column): `memory_search` (a store with `read.tools.search`), `memory_read`
 * (`read.tools.read`), `memory_remember` and `memory_delete` (`write.mode: 'tool'`). Read tools
 * have policy `'allow'`; write tools take the selected store's `write.policy`.
 */
export function createMemoryTools(all: readonly ActiveMemoryStore[]): AgentToolSet {
  const tools: AgentToolSet = {}
  // Stores with named tools are served by their own tools only, never by the shared ones.
  const stores = all.filter((s) => s.tools !== 'named')
  if (stores.some((s) => s.search)) tools.memory_search = searchTool(stores)
  if (stores.some((s) => s.read)) tools.memory_read = readTool(stores)
  if (stores.some((s) => s.writeMode === 'tool')) {
    tools.memory_remember = rememberTool(stores)
    tools.memory_delete = deleteTool(stores)
  }
  for (const store of all.filter((s) => s.tools === 'named')) {
    if (storeAllows(store, 'write')) tools[`remember_${store.name}`] = slotRememberTool(store)
    if (storeAllows(store, 'search')) tools[`recall_${store.name}`] = slotRecallTool(store)
  }
  return tools
}

/** The kind a `remember_<store>` item is saved as: the store's first allowed kind, else `"semantic"`. */
function slotKind(store: ActiveMemoryStore): string {
  return store.allowKinds?.[0] ?? 'semantic'
}

function aboutStore(store: ActiveMemoryStore): string {
  return store.description ? ` It holds ${store.description}.` : ''
}

/**
 * `remember_<store>({ text })` (slots document): saves `text` as a record of the store, with the
 * same checks, quality filter, write policy, approvals and duplicate suppression as
 * `memory_remember` (provenance `toolName` is `remember_<store>`). A store whose `allowKinds` is
 * `[]` accepts nothing (`MEMORY_KIND_NOT_ALLOWED`).
 */
function slotRememberTool(store: ActiveMemoryStore): AgentTool<typeof slotRememberInputSchema> {
  const asRemember = (input: SlotRememberInput): MemoryRememberInput => ({ content: input.text, kind: slotKind(store) })
  const policy = writePolicy([store])
  return {
    description: `Save one lasting item in memory "${store.name}" for later runs: a specific fact, preference or decision in plain text, not greetings or small talk.${aboutStore(store)} An item the store already holds is not saved twice.`,
    inputSchema: slotRememberInputSchema,
    policy: typeof policy === 'function' ? (call) => policy({ ...call, input: asRemember(call.input as SlotRememberInput) }) : policy,
    approvalReason(input: SlotRememberInput) {
      return `Remember in store "${store.name}": "${preview(input.text)}"`
    },
    async execute(input: SlotRememberInput, context: ToolExecutionContext) {
      const result = await rememberInto(store, asRemember(input), context, `remember_${store.name}`)
      return { action: result.action, store: store.name, id: result.record.id, ...(result.action === 'duplicate' ? { note: result.note } : {}), ...('warnings' in result ? { warnings: result.warnings } : {}) }
    },
  }
}

/** One item as `recall_<store>` returns it (the slots document's `MemoryItem`). */
export interface MemorySlotItem {
  id: string
  text: string
  /** ISO 8601 instant. */
  createdAt: string
}

/**
 * `recall_<store>({ query?, limit? })` (slots document): without `query`, the newest active
 * records of the scope first; with `query`, the store's search (its `search.mode`, hybrid with
 * `embed`), best match first. `limit` defaults to the store's `recall.maxItems` (10).
 */
function slotRecallTool(store: ActiveMemoryStore): AgentTool<typeof slotRecallInputSchema> {
  return {
    description: `Look up items saved in memory "${store.name}": omit \`query\` for the newest items, or pass words to search for.${aboutStore(store)} Default limit ${store.recallItems ?? MEMORY_LIMITS.defaultSearchLimit}.`,
    inputSchema: slotRecallInputSchema,
    policy: 'allow',
    async execute(input: SlotRecallInput, context: ToolExecutionContext) {
      const limit = input.limit ?? store.recallItems ?? MEMORY_LIMITS.defaultSearchLimit
      const records = input.query === undefined
        ? newestFirst((await store.adapter.export(targetOf(store))).filter((record) => record.status === 'active')).slice(0, limit)
        : (await searchStore(store, { query: input.query, limit, ...(store.searchMode === 'substring' ? { mode: 'substring' as const } : {}) }, context.signal)).map((hit) => hit.record).filter((record) => record.status === 'active').slice(0, limit)
      const items: MemorySlotItem[] = records.map((record) => ({ id: record.id, text: record.content, createdAt: record.createdAt }))
      return { store: store.name, items }
    },
  }
}

/** Records newest first (by `createdAt`, later writes first on a tie). */
export function newestFirst(records: readonly MemoryRecord[]): MemoryRecord[] {
  return records
    .map((record, position) => ({ record, position, created: Date.parse(record.createdAt) }))
    .sort((a, b) => b.created - a.created || b.position - a.position)
    .map((entry) => entry.record)
}

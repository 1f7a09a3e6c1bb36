/**
 * `workspaceJsonlMemoryStore()`: the built-in store, an append-only JSONL event log in the agent
 * workspace (line format: see `../log.ts`).
 *
 * Source: capability document, "The built-in `workspaceJsonlMemoryStore()` keeps records in the
 * Agent Workspace", "`workspaceJsonlMemoryStore()` appends records, supersede events, and delete
 * tombstones to a JSONL file in the Agent Workspace", "`workspaceJsonlMemoryStore()` requires a
 * Workspace. It requires write access when the Agent remembers or deletes records", and the
 * option `path` (default `"memory/memory.jsonl"`, a workspace-relative JSONL file path).
 */
import { DEFAULT_MEMORY_LOG_PATH } from '../../workspace/defaults.ts'
import { agentError } from '../../errors.ts'
import { describeTextProblem, findTextProblem, MAX_JSON_DEPTH } from '../../text.ts'
import { openMemoryLog, type MemoryLog } from '../event-log.ts'
import { NOT_NOW, type LogAccessOptions } from '../../log/index.ts'
import { activeDuplicate, cloneRecord, currentInstant, isInstant, newRecordId, rememberDrafts, partitionIndexOf, partitionKey, partitionRecords, type MemoryRecordState } from '../records.ts'
import { sameScope, SHARED_SCOPES_MAX, scopeSlot, sharedScope, validateScope } from '../scope.ts'
import { scopeChanges } from '../scope-changes.ts'
import { eraseRecordVectors, workspaceVectorStore, type MemoryVectorStore } from '../vectors-store.ts'
import { partitionDropListener } from '../hybrid-scope.ts'
import type {
  MemoryAppendOptions,
  MemoryAudit,
  MemoryDeleteOptions,
  MemoryRecord,
  MemoryRecordInput,
  MemoryScopeChanges,
  MemorySearchHit,
  MemorySearchQuery,
  MemoryStoreAdapter,
  MemoryStoreContext,
  MemoryStoreFactory,
  MemoryTarget,
} from '../types.ts'

/** Options of {@link workspaceJsonlMemoryStore}. */
export interface WorkspaceJsonlMemoryStoreOptions {
  /**
   * Workspace-relative path of the JSONL file. Default `"memory/memory.jsonl"`. Must be relative,
   * use `/` between segments, have no empty, `.` or `..` segment, no `:` or `\`, and end with `.jsonl`.
   */
  path?: string
  /** `fsync` every write (durable against power loss; fs driver). Default `false`. Cost: see `npm run bench`. */
  fsync?: boolean
  /** Reads skip corrupt lines (with a warning) instead of failing; writes still fail. Default `false`. */
  readPastCorruption?: boolean
  /**
   * Lines appended between two persisted checkpoints of the state (`<path>.checkpoint`, also
   * written at compaction), at least: the next one also waits for a quarter more lines than the
   * last one covers (at 100,000 lines, every 25,000). A cold open replays only the lines after
   * the checkpoint. `false`: no checkpoints. Default 10,000. See docs/log-format.md, "Checkpoints".
   */
  checkpointEvery?: number | false
  /**
   * Scopes (partitions: one store and exact scope) kept loaded in memory, at most, after an
   * operation: beyond it the least recently used scopes that the checkpoint holds exactly (no
   * lines of theirs after it) are dropped (records, search index, duplicate map) and loaded again
   * on their next use (one ranged read of their checkpoint section, a digest check and an
   * inflate). `false`: no bound. Default {@link DEFAULT_MAX_LOADED_SCOPES}. See
   * docs/log-format.md, "Dropping partitions".
   */
  maxLoadedScopes?: number | false
}

/** Default {@link WorkspaceJsonlMemoryStoreOptions.maxLoadedScopes}. */
export const DEFAULT_MAX_LOADED_SCOPES = 1000

/** The factory {@link workspaceJsonlMemoryStore} returns, with the resolved path and workspace key. */
export interface WorkspaceJsonlMemoryStoreFactory extends MemoryStoreFactory {
  kind: 'workspace-jsonl'
  /** The validated workspace-relative path, for example `memory/memory.jsonl`. */
  readonly path: string
  /** The workspace key of the log, for example `memory:memory.jsonl`. */
  readonly key: string
  create(context: MemoryStoreContext): MemoryLogStoreAdapter
}

export { DEFAULT_MEMORY_LOG_PATH }

/**
 * Creates the workspace JSONL store factory. `create(context)` opens the log in
 * `context.workspace`; the folded records are kept per workspace object, so every invocation of
 * an agent sees what earlier invocations wrote. Stores sharing one file see only their own
 * records (each line names its store).
 *
 * @throws AgentError `MEMORY_STORE_OPTIONS_INVALID` for an unknown option key,
 * `MEMORY_STORE_PATH_INVALID` for a bad `path`. `create` throws `MEMORY_WORKSPACE_REQUIRED`
 * without a workspace and `MEMORY_WORKSPACE_READ_ONLY` when `context.writable` and the workspace
 * is read-only.
 */
export function workspaceJsonlMemoryStore(options: WorkspaceJsonlMemoryStoreOptions = {}): WorkspaceJsonlMemoryStoreFactory {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw agentError('MEMORY_STORE_OPTIONS_INVALID', 'the options of workspaceJsonlMemoryStore() must be an object', 'call workspaceJsonlMemoryStore() or workspaceJsonlMemoryStore({ path: "memory/notes.jsonl" })')
  }
  const unknown = Object.keys(options).filter(option => option !== 'path' && option !== 'fsync' && option !== 'readPastCorruption' && option !== 'checkpointEvery' && option !== 'maxLoadedScopes')
  if (unknown.length > 0) {
    throw agentError('MEMORY_STORE_OPTIONS_INVALID', `workspaceJsonlMemoryStore() got unknown option ${unknown.map(option => `"${option}"`).join(', ')}`, 'the options are `path`, `fsync`, `readPastCorruption`, `checkpointEvery` and `maxLoadedScopes`; check the spelling', { options: unknown })
  }
  const every = options.checkpointEvery
  if (every !== undefined && every !== false && !(Number.isSafeInteger(every) && every >= 1)) {
    throw agentError('MEMORY_STORE_OPTIONS_INVALID', 'workspaceJsonlMemoryStore() option `checkpointEvery` must be a whole number of lines from 1, or false', 'pass checkpointEvery: 10000, checkpointEvery: false, or leave it out', { option: 'checkpointEvery' })
  }
  const maxLoaded = options.maxLoadedScopes ?? DEFAULT_MAX_LOADED_SCOPES
  if (maxLoaded !== false && !(Number.isSafeInteger(maxLoaded) && maxLoaded >= 1)) {
    throw agentError('MEMORY_STORE_OPTIONS_INVALID', 'workspaceJsonlMemoryStore() option `maxLoadedScopes` must be a whole number of scopes from 1, or false', 'pass maxLoadedScopes: 1000, maxLoadedScopes: false, or leave it out', { option: 'maxLoadedScopes' })
  }
  for (const flag of ['fsync', 'readPastCorruption'] as const) {
    if (options[flag] !== undefined && typeof options[flag] !== 'boolean') {
      throw agentError('MEMORY_STORE_OPTIONS_INVALID', `workspaceJsonlMemoryStore() option \`${flag}\` must be true or false`, `pass ${flag}: true, or leave it out`, { option: flag })
    }
  }
  const logOptions = { ...(options.fsync ? { fsync: true } : {}), ...(options.readPastCorruption ? { readPastCorruption: true } : {}), ...(every !== undefined ? { checkpointEvery: every } : {}), ...(maxLoaded !== false ? { maxLoadedPartitions: maxLoaded } : {}) }
  const path = checkLogPath(options.path ?? DEFAULT_MEMORY_LOG_PATH)
  const key = path.split('/').join(':')
  return {
    kind: 'workspace-jsonl',
    path,
    key,
    create(context: MemoryStoreContext): MemoryLogStoreAdapter {
      const { workspace } = context
      if (!workspace) {
        throw agentError('MEMORY_WORKSPACE_REQUIRED', `the memory store "${context.store}" keeps its records in the agent workspace, and agent "${context.agent}" has none`, 'pass `workspace: createWorkspace()` to defineAgent(), or use inMemoryMemoryStore() for records that need not persist', { store: context.store })
      }
      if (context.writable && !workspace.writable) {
        throw agentError('MEMORY_WORKSPACE_READ_ONLY', `the memory store "${context.store}" allows tool writes, but the workspace of agent "${context.agent}" is read-only`, 'give the agent a writable workspace, or set the store\'s `write.mode` to "off"', { store: context.store })
      }
      return memoryLogAdapter(openMemoryLog(workspace, key, logOptions))
    },
  }
}

/**
 * Checks a store path and returns it.
 *
 * @throws AgentError `MEMORY_STORE_PATH_INVALID`.
 */
export function checkLogPath(path: unknown): string {
  const fail = (why: string) => agentError('MEMORY_STORE_PATH_INVALID', `the memory log path ${JSON.stringify(path)} ${why}`, `use a workspace-relative path such as "${DEFAULT_MEMORY_LOG_PATH}"`, { path })
  if (typeof path !== 'string' || path === '') throw fail('is not a non-empty string')
  if (path.startsWith('/') || /^[a-z]:/i.test(path)) throw fail('is absolute')
  if (/[\\:]/.test(path)) throw fail('contains ":" or "\\"')
  const segments = path.split('/')
  if (segments.includes('..')) throw fail('contains ".." (it must stay inside the workspace)')
  if (segments.some(segment => segment === '' || segment === '.')) throw fail('has an empty or "." segment')
  if (!path.endsWith('.jsonl') || segments.at(-1) === '.jsonl') throw fail('does not end with a file name ending in ".jsonl"')
  return path
}

/**
 * The adapter of the log-backed stores: the {@link MemoryStoreAdapter} contract plus a hard
 * delete (compaction and erasure, docs/log-format.md; the basis of `retention.hardDelete`).
 */
export interface MemoryLogStoreAdapter extends MemoryStoreAdapter {
  /**
   * Erases a record of the scope (any status): appends an `erase` event, then compacts the log,
   * so the record's content, title, tags, metadata and provenance are gone from the stored bytes
   * while the chain still verifies. Afterwards read, search and export no longer know the id.
   * Returns `true` when a record was erased, `false` for an unknown or other-scope id.
   * Cost: one rewrite of the whole log.
   *
   * @throws AgentError `MEMORY_SCOPE_*`, `MEMORY_AUDIT_REQUIRED`, `MEMORY_WORKSPACE_READ_ONLY`, `MEMORY_LOG_CORRUPT`.
   */
  hardDelete(target: MemoryTarget, id: string, options: MemoryDeleteOptions): Promise<boolean>
  /** What changed in the scope since a cursor (scope-changes.ts: the partition's change journal, fed by every event the log folds, another writer's included). */
  changes(target: MemoryTarget, since?: unknown): Promise<MemoryScopeChanges>
  /** The open log (for verify and compact). */
  readonly log: MemoryLog
  /** The log's vector sidecar (`<log key>.vectors`); erasing a record removes its vectors. */
  readonly vectors?: MemoryVectorStore
}

/**
 * The vector store of a log adapter: removing vectors (an erasure's rewrite: `hardDelete`, scope
 * erasure, retention) also removes those of every record the log holds as erased, so the lines a
 * process killed between an erasure's compaction and its vector rewrite left go with the next one.
 */
function sweepingVectors(log: MemoryLog, store: MemoryVectorStore): MemoryVectorStore {
  const remove = async (ids: readonly string[]) => {
    const erased = await log.view(state => [...state.erased], { partitions: [] })
    return store.remove([...new Set([...ids, ...erased])])
  }
  // Every other member is the store's own, called on the store (a class with private fields works too).
  return new Proxy(store, {
    get(target, key) {
      if (key === 'remove') return remove
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/**
 * A {@link MemoryStoreAdapter} over an open memory log: the behaviour shared by the workspace
 * JSONL store and the in-memory store. Every method validates the target and then sees only the
 * records of exactly `target.store` and `target.scope`. Search is served by the partition's
 * search index (`createSearchIndex()` of `../search.ts`, one per store and exact scope). Records
 * returned are copies. Record vectors (hybrid search) go to `options.vectors`, by default the
 * log's sidecar `<log key>.vectors` in its workspace.
 */
export function memoryLogAdapter(log: MemoryLog, options: { vectors?: MemoryVectorStore } = {}): MemoryLogStoreAdapter {
  const vectors = sweepingVectors(log, options.vectors ?? workspaceVectorStore(log.workspace, `${log.key}.vectors`))
  // A scope dropped from the log's memory drops its vector index too.
  log.onPartitionDropped?.(partitionDropListener(vectors))
  const settle = indexSettler(log)
  const now: ScopeSearch = { access: NO_PARTITION, query: undefined!, built: undefined }
  const readNow = (state: MemoryRecordState) => searchScope(state, now)
  return {
    log,
    vectors,
    async search(target, query) {
      target = scopedTarget(target)
      const access = servedBy(target)
      // The log unchanged and the scope loaded: answered in this turn by the adapter's one reader
      // (peek runs it synchronously or not at all, so its arguments cannot be another search's).
      now.access = access
      now.query = query
      now.built = undefined
      const found = peek(log, readNow, access)
      let hits: MemorySearchHit[]
      let built: number | undefined
      if (found !== NOT_NOW) {
        hits = found
        built = now.built
      }
      else {
        const later: ScopeSearch = { access, query, built: undefined }
        hits = await log.view(state => searchScope(state, later), access)
        built = later.built
      }
      // A large index just built: the log may persist it (a checkpoint), so a cold open need not build it again.
      if (built !== undefined) log.indexBuilt(built)
      for (let at = 0; at < hits.length; at++) {
        // The engine's hits are made for this search: each takes a copy of its record in place.
        const hit = hits[at]!
        hit.record = cloneRecord(hit.record)
      }
      return hits
    },
    async hardDelete(target, id, options) {
      target = scopedTarget(target)
      const audit = checkDeleteOptions(options)
      const [erased] = await log.write((state) => {
        const existing = findInScope(state, target, id)
        return existing ? [tombstone('erase', target, existing, audit, options.reason)] : []
      }, servedBy(target))
      if (!erased) return false
      await log.compact()
      await eraseRecordVectors(vectors, [id])
      return true
    },
    async read(target, id) {
      target = scopedTarget(target)
      const read = (state: MemoryRecordState) => findInScope(state, target, id)
      const access = servedBy(target)
      const now = peek(log, read, access)
      const record = now === NOT_NOW ? await log.view(read, access) : now
      return record && cloneRecord(record)
    },
    async append(target, input, options) {
      target = scopedTarget(target)
      checkInput(input)
      const audit = checkAudit(options)
      const at = currentInstant()
      const recordId = newRecordId()
      const supersedes = input.supersedes && input.supersedes.length > 0 ? [...new Set(input.supersedes)] : []
      let duplicate: MemoryRecord | undefined
      const written = await log.write((state) => {
        // Duplicates (hosted-memory document): decided under the write lock on the current state, so parallel identical writes give one record.
        duplicate = options.duplicates === 'skip' ? findDuplicate(state, target, input, supersedes) : undefined
        if (duplicate) return []
        if (supersedes.length === 0) return rememberDrafts(target, input, { recordId, at, audit, supersedes, versionOf: noVersions })
        const missing = supersedes.filter(id => findInScope(state, target, id)?.status !== 'active')
        if (missing.length > 0) {
          throw agentError('MEMORY_SUPERSEDE_NOT_FOUND', `${missing.map(id => `"${id}"`).join(', ')} ${missing.length === 1 ? 'is not an active record' : 'are not active records'} of the memory store "${target.store}"`, 'search the store for the current record ids and pass only those in `supersedes`; nothing was saved', { ids: missing })
        }
        return rememberDrafts(target, input, { recordId, at, audit, supersedes, versionOf: id => state.records.get(id)!.version })
      }, servedBy(target))
      if (duplicate) {
        const existing = cloneRecord(duplicate)
        options.onDuplicate?.(cloneRecord(existing))
        return existing
      }
      settle(target)
      return cloneRecord(written[0]!)
    },
    async delete(target, id, options) {
      target = scopedTarget(target)
      const audit = checkDeleteOptions(options)
      const [record] = await log.write((state) => {
        const existing = findInScope(state, target, id)
        return existing && existing.status !== 'deleted' ? [tombstone('delete', target, existing, audit, options.reason)] : []
      }, servedBy(target))
      if (record) settle(target)
      return record && cloneRecord(record)
    },
    async export(target) {
      target = scopedTarget(target)
      return log.view(state => partitionRecords(state, target.store, target.scope).map(record => cloneRecord(record)), servedBy(target))
    },
    async changes(target, since) {
      target = scopedTarget(target)
      return log.view(state => scopeChanges(state, target, since), servedBy(target))
    },
  }
}

/** One search of a scope: its arguments, and the index's size when this search built it. */
interface ScopeSearch {
  /** The target's access ({@link servedBy}): its one partition is the one searched. */
  access: LogAccessOptions
  query: MemorySearchQuery
  built: number | undefined
}

/** The hits of `search.query` in its target's partition index; notes in `search.built` the index's size when this search built it. */
function searchScope(state: MemoryRecordState, search: ScopeSearch): MemorySearchHit[] {
  const index = partitionIndexOf(state, search.access.partitions![0]!)
  const wasBuilt = index.built
  const found = index.search(search.query)
  if (!wasBuilt && index.built) search.built = index.size
  return found
}

/** The `versionOf` of a remember that supersedes nothing (never called). */
const noVersions = (): number => 1

/** The log access of an operation on `target`: only its partition is loaded (ids of other scopes answer as unknown). */
function servedBy(target: MemoryTarget): LogAccessOptions {
  // A shared scope keeps the access of its first store's partition with it: no lookup.
  const slot = scopeSlot(target.scope)
  if (slot !== undefined && slot.store === target.store && slot.access !== undefined) return slot.access as LogAccessOptions
  const key = partitionKey(target.store, target.scope)
  let access = accessByPartition.get(key)
  if (access === undefined) {
    if (accessByPartition.size >= SHARED_SCOPES_MAX) accessByPartition.clear()
    accessByPartition.set(key, access = Object.freeze({ partitions: Object.freeze([key]) }))
  }
  if (slot !== undefined && slot.store === target.store && slot.key === key) slot.access = access
  return access
}

/** One frozen access per partition (operations only read it), so that an operation makes none. */
const accessByPartition = new Map<string, LogAccessOptions>()

/**
 * Takes a write into the scope's search index on the next idle turn (`setImmediate`, else a
 * zero timer) instead of on the scope's next search, when the index is built: the index takes
 * updates lazily, and taking them in (tokenizing the record, growing the posting arenas) would
 * otherwise fall on that search. The scopes written in one turn share one idle task and one
 * look at the log (`peek`); when the log changed meanwhile or a scope was dropped, nothing is
 * done and the next search takes the updates in as before. A write followed by a search
 * in the same turn still has that search take it in. While writes keep coming (a burst, which
 * gives the event loop a turn every 10 ms, `writeTurns`), the task waits until a look
 * {@link SETTLE_RECHECK_MS} later finds no new write, or {@link SETTLE_MAX_WAIT_MS} went by, so
 * that a scope takes a burst's updates in a few batches (each batch grows its posting arenas
 * once) instead of one per turn.
 */
function indexSettler(log: MemoryLog): (target: MemoryTarget) => void {
  const written = new Set<string>()
  let scheduled = false
  let writes = 0
  let seen = 0
  let since = 0
  const settle = () => {
    if (writes !== seen && Date.now() - since < SETTLE_MAX_WAIT_MS) {
      seen = writes
      setTimeout(settle, SETTLE_RECHECK_MS)
      return
    }
    scheduled = false
    const keys = [...written]
    written.clear()
    try {
      // Names no partition: this task is no use of the scopes (the bound on loaded scopes keeps
      // the operations' order), and a scope dropped meanwhile has no index here to update.
      peek(log, (state) => {
        for (const key of keys) {
          const index = state.indexes.get(key)
          // `size` takes the pending updates in; an index never searched stays unbuilt.
          if (index?.built) void index.size
        }
      }, NO_PARTITION)
    }
    catch {
      // A read error of the workspace: the next operation on the log meets it and reports it.
    }
  }
  return (target) => {
    written.add(partitionKey(target.store, target.scope))
    writes++
    if (scheduled) return
    scheduled = true
    seen = writes
    since = Date.now()
    onIdle(settle)
  }
}

const NO_PARTITION: LogAccessOptions = { partitions: [] }

/** How long after a look that found new writes the idle index task looks again (ms). */
const SETTLE_RECHECK_MS = 2
/** Longest the idle index task waits for writes to stop (ms): a steady stream of writes is settled this often. */
const SETTLE_MAX_WAIT_MS = 1000

const onIdle: (task: () => void) => void = typeof setImmediate === 'function' ? (task) => { setImmediate(task) } : (task) => { setTimeout(task, 0) }

/** `log.peek` where the log has it, else {@link NOT_NOW}. */
function peek<T>(log: MemoryLog, read: (state: MemoryRecordState) => T, access: LogAccessOptions): T | typeof NOT_NOW {
  return log.peek ? log.peek(read, access) : NOT_NOW
}

/** The oldest active record of the scope and kind with the same normalized content that this write does not supersede. */
function findDuplicate(state: MemoryRecordState, target: MemoryTarget, input: MemoryRecordInput, supersedes: readonly string[]): MemoryRecord | undefined {
  return activeDuplicate(state, partitionKey(target.store, target.scope), input.kind, input.content, supersedes)
}

function findInScope(state: MemoryRecordState, target: MemoryTarget, id: string): MemoryRecord | undefined {
  if (typeof id !== 'string') return undefined
  const record = state.records.get(id)
  // Another store's or scope's record answers exactly like an unknown id.
  return record && record.store === target.store && sameScope(record.scope, target.scope) ? record : undefined
}

/**
 * The target checked, with its scope as the one frozen copy of that scope holding only its
 * fields (`sharedScope`): the partition key of a frozen scope is computed once (`partitionKey`
 * caches it), however often operations and the log name the partition.
 */
export function scopedTarget(target: MemoryTarget): MemoryTarget {
  checkStoreName(target)
  return { store: target.store, scope: sharedScope(target.scope) }
}

function checkStoreName(target: MemoryTarget): void {
  if (!target || typeof target.store !== 'string' || target.store === '') {
    throw agentError('MEMORY_TARGET_INVALID', 'the memory operation has no store name', 'pass the target as { store, scope } with the store\'s configured name')
  }
}

export function checkTarget(target: MemoryTarget): void {
  checkStoreName(target)
  validateScope(target.scope)
}

function invalidInput(why: string) {
  return agentError('MEMORY_RECORD_INVALID', why, 'fix the field and retry; nothing was saved')
}

// The capability validates tool input with zod; this guards direct API use so that the log never
// holds a line that replay would reject.
export function checkInput(input: MemoryRecordInput): void {
  if (!input || typeof input !== 'object') throw invalidInput('the record input must be an object')
  if (typeof input.kind !== 'string' || input.kind === '') throw invalidInput('`kind` must be a non-empty string')
  if (typeof input.content !== 'string') throw invalidInput('`content` must be a string')
  if (input.title !== undefined && typeof input.title !== 'string') throw invalidInput('`title` must be a string')
  if (input.tags !== undefined && !(Array.isArray(input.tags) && input.tags.every(tag => typeof tag === 'string'))) throw invalidInput('`tags` must be a list of strings')
  if (input.metadata !== undefined && !isPlainObject(input.metadata)) throw invalidInput('`metadata` must be an object')
  if (input.pinned !== undefined && typeof input.pinned !== 'boolean') throw invalidInput('`pinned` must be true or false')
  if (input.confidence !== undefined && !(typeof input.confidence === 'number' && input.confidence >= 0 && input.confidence <= 1)) throw invalidInput('`confidence` must be a number from 0 to 1')
  if (input.supersedes !== undefined && !(Array.isArray(input.supersedes) && input.supersedes.every(id => typeof id === 'string'))) throw invalidInput('`supersedes` must be a list of record ids')
  if (input.provenance !== undefined && !isPlainObject(input.provenance)) throw invalidInput('`provenance` must be an object')
  if (input.createdAt !== undefined && !isInstant(input.createdAt)) throw invalidInput('`createdAt` must be an ISO 8601 instant')
  if (input.occurredAt !== undefined && !isInstant(input.occurredAt)) throw invalidInput('`occurredAt` must be an ISO 8601 instant with a zone or a date such as 2024-05-01')
  if (input.episode !== undefined && !(isPlainObject(input.episode) && typeof input.episode.observation === 'string' && (['thoughts', 'action', 'result'] as const).every(field => input.episode![field] === undefined || typeof input.episode![field] === 'string'))) throw invalidInput('`episode` must be { observation, thoughts?, action?, result? } of strings')
  if (input.rawExtract !== undefined && typeof input.rawExtract !== 'string') throw invalidInput('`rawExtract` must be a string')
  for (const field of ['keywords', 'topics', 'recallTriggers'] as const) {
    if (input[field] !== undefined && !(Array.isArray(input[field]) && input[field].every(item => typeof item === 'string'))) throw invalidInput(`\`${field}\` must be a list of strings`)
  }
  // Every string is valid Unicode and metadata/provenance are at most MAX_JSON_DEPTH deep (src/text.ts).
  const problem = findTextProblem(input, MAX_JSON_DEPTH + 1)
  if (problem) throw invalidInput(`the record input was refused: ${describeTextProblem(problem)}`)
}

export function checkAudit(options: MemoryAppendOptions | MemoryDeleteOptions): MemoryAudit {
  if (!options || !isPlainObject(options.audit) || typeof options.audit.via !== 'string') {
    throw agentError('MEMORY_AUDIT_REQUIRED', 'the memory write has no audit block with `via`', 'pass { audit: { via: "tool" | "api" | "cli" | "import", runId, threadId, agent, user } }')
  }
  return options.audit
}

/** The audit block of a delete or hard delete, after checking its `reason`. */
export function checkDeleteOptions(options: MemoryDeleteOptions): MemoryAudit {
  const audit = checkAudit(options)
  if (options.reason !== undefined && typeof options.reason !== 'string') throw invalidInput('`reason` must be a string')
  return audit
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** The `delete` (soft) or `erase` (hard) event of a record: the next version, with the caller's audit and reason. */
export function tombstone<T extends 'delete' | 'erase'>(type: T, target: MemoryTarget, existing: MemoryRecord, audit: MemoryAudit, reason: string | undefined) {
  return {
    type,
    recordId: existing.id,
    store: target.store,
    scope: target.scope,
    version: existing.version + 1,
    at: currentInstant(),
    audit,
    ...(reason !== undefined ? { reason } : {}),
  }
}

/**
 * The memory store adapter over a SQL database (SQLite, Postgres): the parts that do not depend on
 * the database. A database keeps two tables written in one transaction per write:
 *
 * - `memory_events`: one row per event, `line` = exactly the JSONL line of docs/log-format.md
 *   (canonical JSON, format version 3: `seq`, `prev`, `digest`), so verify,
 *   export, compaction and erasure mean what they mean for the JSONL log;
 * - the current state of every record (the fold of its events), one row per record (Postgres:
 *   `memory_records`; SQLite: the columns of the row of the record's `remember` line) with its
 *   partition (store + exact scope), the columns filters need, and the search text (terms of `tokenize()` of `src/search/text.ts`, each prefixed with a
 *   token of its partition, so a full-text lookup only touches the postings of one scope).
 *
 * Nothing of the whole store is held in memory: every operation asks the database, and a write
 * reads only the rows it needs (the chain head, the records it names, the duplicate candidates).
 */
import { agentError } from '../../../errors.ts'
import { writeTurns } from '../../../log/turns.ts'
import { formatMemoryLine, parseMemoryLine, strippedMemoryLine } from '../../event-log.ts'
import { hash53, contentKey, contentKeyHash } from '../../dedupe.ts'
import { recordDateWords, searchableContent, searchableTags } from '../../kinds.ts'
import { cloneRecord, currentInstant, emptyRecordState, eventConflict, foldEvent, lineDraftOf, newRecordId, parseInstant, partitionKey, rememberDrafts, type MemoryEventDraft, type MemoryRecordState } from '../../records.ts'
import { sameContent } from '../../dedupe.ts'
import { sameScope } from '../../scope.ts'
import { DEFAULT_SEARCH_INDEX_OPTIONS, DEFAULT_SEARCH_LIMIT, recordMatchesFilters, snippetOf } from '../../../search/search.ts'
import { searchRecords, substringScoreOf } from '../../search-index.ts'
import { floorLacksWord, wordsFirstAtFloor } from '../../../search/substring-rule.ts'
import { forEachSurface, tokenize } from '../../../search/text.ts'
import { synonymsOf } from '../../../search/synonyms.ts'
import type { MemoryRecord, MemorySearchHit, MemorySearchQuery, MemoryTarget } from '../../types.ts'
import type { MemoryScopeView, MemoryScopeWriter } from '../../scope-write.ts'
import { checkAudit, checkDeleteOptions, checkInput, scopedTarget, tombstone, type MemoryLogStoreAdapter } from '../workspace-jsonl.ts'

/** A record's row as a write sees it: the record (absent once erased) and whether its id was erased. */
export interface SqlStoredRecord {
  record?: MemoryRecord
  erased: boolean
}

/** One `memory_events` row to insert. */
export interface SqlEventRow {
  seq: number
  type: string
  recordId: string
  store: string
  partition: string
  digest: string
  line: string
}

/** One record's row to insert or replace (the columns both databases keep). */
export interface SqlRecordRow {
  id: string
  partition: string
  /** Creation order across the store: the `seq` of the record's `remember` line. */
  seq: number
  /** `active`, `superseded`, `deleted` or `erased` (then `record` is `null` and the text columns are empty). */
  status: string
  kind: string
  /** `createdAt` in ms since the epoch (`NaN` never: an unparsable instant cannot be written). */
  createdMs: number
  /** {@link contentKeyHash} of the kind and normalized content, for the duplicate check; `null` unless active. */
  contentHash: number | null
  /** The record after its events, `null` once erased ({@link recordJson} gives it as JSON, {@link recordHaystack} its substring text). */
  record: MemoryRecord | null
  /** The seqs of this write's events of the record (for a new row, its `remember` line first), in order. */
  events: number[]
  /** Search terms per field, each prefixed with the partition token (see {@link scopedTerms}); empty for a backend that derives them itself ({@link SqlBackend.deferredTerms}). */
  titleTerms: string[]
  contentTerms: string[]
  tagTerms: string[]
  /**
   * The ranking-only date words of the record (`recordDateWords`: `occurredAt`, else `createdAt`),
   * scoped like the others; never in the haystack. Every non-empty dates field has the same 4
   * tokens (weekday, day, month, year), so its BM25F length normalization is 1 and no length or
   * statistics of it are kept.
   */
  dateTerms: string[]
  /** Terms per field (title, content, tags): the field lengths of BM25F. Zeros unless active. */
  lengths: [number, number, number]
}

/** Per partition, what BM25F needs besides the postings: active records, and per field the sum of lengths and the records where it is not empty. */
export interface SqlPartitionStats {
  active: number
  lengthSums: [number, number, number]
  fieldCounts: [number, number, number]
}

/** One posting: `count` occurrences of `term` in `field` (0 title, 1 content, 2 tags, 3 dates) of the record created at `seq`. */
export interface SqlPosting {
  seq: number
  id: string
  createdMs: number
  lengths: [number, number, number]
  term: string
  field: number
  count: number
}

/** What a write transaction can do: read the rows it needs, then insert and update rows. Runs under the store's write lock. */
export interface SqlWriteTx {
  /** `seq` and `digest` of the last event, `{ seq: 0, digest: null }` for an empty store. */
  head(): Promise<{ seq: number; digest: string | null }>
  /** The rows of these record ids (missing ids are left out). */
  records(ids: readonly string[]): Promise<Map<string, SqlStoredRecord>>
  /** Active records of the partition whose content hash is `hash` (duplicate candidates), oldest write first. */
  duplicates(partition: string, hash: number): Promise<MemoryRecord[]>
  insertEvents(rows: readonly SqlEventRow[]): Promise<void>
  putRecords(rows: readonly SqlRecordRow[]): Promise<void>
  /** Every event row of the record, in `seq` order. */
  eventLines(recordId: string): Promise<Array<{ seq: number; line: string }>>
  updateLine(seq: number, line: string): Promise<void>
  /** Adds `delta` to the partition's {@link SqlPartitionStats} (a new row when missing). */
  addStats(partition: string, delta: SqlPartitionStats): Promise<void>
  /** Records of the partition in creation order, any status but erased (the scope writes of retention, erasure and import). */
  partitionRecords(partition: string): Promise<MemoryRecord[]>
  /** Active records of the partition (its {@link SqlPartitionStats} `active`). */
  activeCount(partition: string): Promise<number>
}

/** The database side of a SQL memory store. */
export interface SqlBackend {
  /**
   * The backend derives each record's search terms from its lines after the write (SQLite:
   * sqlite/fts-tail.ts), so the record rows of a write carry empty term lists and only the
   * field lengths. Default `false`: the rows carry the terms.
   */
  readonly deferredTerms?: boolean
  /** Runs `task` in one transaction holding the store's write lock; rolls back when it throws. */
  write<T>(task: (tx: SqlWriteTx) => Promise<T>): Promise<T>
  read(partition: string, id: string): Promise<MemoryRecord | undefined>
  /** Records of the partition in creation order, any status but erased. */
  export(partition: string): Promise<MemoryRecord[]>
  /**
   * Active records of the partition whose haystack ({@link recordHaystack}) contains `needle`
   * ({@link haystackText} of the query), with their occurrence count as `score`, best first
   * (count descending, then newest, then last created), `limit` from `offset`.
   */
  substring(partition: string, needle: string, page: { limit: number; offset: number }): Promise<Array<{ record: MemoryRecord; score: number }>>
  /** The postings of `terms` (partition-prefixed) among the partition's active records. */
  postings(partition: string, terms: readonly string[]): Promise<SqlPosting[]>
  stats(partition: string): Promise<SqlPartitionStats>
  /** The records of the partition created at these seqs (erased ones left out). */
  bySeq(partition: string, seqs: readonly number[]): Promise<Map<number, MemoryRecord>>
  /** Per term (partition-prefixed), the number of the partition's active records holding it (terms held by none left out). */
  documentFrequencies(partition: string, terms: readonly string[]): Promise<Map<string, number>>
  /**
   * The seqs of at most `limit` active records of the partition holding any of `terms`, the
   * records the database's own ranking of those terms (SQLite: FTS5 `bm25()`, Postgres: `ts_rank`)
   * puts first.
   */
  termCandidates(partition: string, terms: readonly string[], limit: number): Promise<number[]>
  /**
   * The chain head, and what events after `since` changed in the partition: the rows of the
   * records they name. `changed` is absent when `since` is `undefined` or no longer in the chain
   * (no event at `since.seq`, or one with another digest: the database was replaced).
   */
  changesSince(partition: string, since: SqlChainPoint | undefined): Promise<{ head: SqlChainPoint; changed?: Map<string, SqlStoredRecord> }>
  /** Runs after a compaction changed lines (SQLite checkpoints its WAL). */
  afterCompaction?(): Promise<void>
}

/** An event of the chain: its `seq` and `digest` (`{ seq: 0, digest: null }`: before the first event). */
export interface SqlChainPoint {
  seq: number
  digest: string | null
}

/**
 * Text as the substring rule compares it: lower case (as `countOccurrences` of the default search),
 * NUL and U+0001 as U+FFFD (Postgres text cannot hold NUL; U+0001 joins the fields). Applied alike
 * to each stored field and to the query: for a query without NUL, U+0001 and U+FFFD, the
 * non-overlapping occurrences in the joined fields are exactly the sum of its occurrences per
 * field (none can span a join); for another query, a superset of the records to count exactly.
 */
export function haystackText(text: string): string {
  return text.toLowerCase().replace(/[\u0000\u0001]/g, '\uFFFD')
}

/** The record of a row as JSON (a database's own cache of the fold, not signed), `null` once erased. */
export function recordJson(row: SqlRecordRow): string | null {
  return row.record === null ? null : JSON.stringify(row.record)
}

/** {@link haystackText} of the title, the content and each tag of an active row's record, joined by `\u0001` (where the substring rule counts occurrences); `''` otherwise. */
export function recordHaystack(row: SqlRecordRow): string {
  if (row.record === null || row.status !== 'active') return ''
  const { record } = row
  // Joined field by field: no list of the fields and of their texts.
  let text = `${record.title === undefined || record.title === '' ? '' : haystackText(record.title)}\u0001${haystackText(searchableContent(record))}`
  for (const tag of searchableTags(record)) text += `\u0001${haystackText(tag)}`
  return text
}

/** The partition token: a short hash of the partition key, prefixed to every search term of the partition. */
export function partitionToken(partition: string): string {
  let token = partitionTokens.get(partition)
  if (token === undefined) {
    token = `p${hash53(partition)}`
    // A bounded cache (each write and search of a scope asks): the oldest entry leaves first.
    if (partitionTokens.size >= MAX_PARTITION_TOKENS) partitionTokens.delete(partitionTokens.keys().next().value!)
    partitionTokens.set(partition, token)
  }
  return token
}

const MAX_PARTITION_TOKENS = 10_000
const partitionTokens = new Map<string, string>()

/** `terms` of one partition as index tokens: `<partition token>q<term>` (the token is `p` and 14 hex digits, so `q` cannot be part of it). */
export function scopedTerms(token: string, terms: readonly string[]): string[] {
  return terms.map(term => `${token}q${term}`)
}

/**
 * The search and filter columns of a record's row (status `erased`: `record` omitted, all text
 * empty); `events`: the seqs of the write's events of the record; `terms: false` leaves the term
 * lists empty and counts the field lengths only.
 */
export function recordRow(record: MemoryRecord, seq: number, partition: string, erased = false, events: number[] = [], terms = true): SqlRecordRow {
  if (erased) {
    return { id: record.id, partition, seq, status: 'erased', kind: record.kind, createdMs: parseInstant(record.createdAt) ?? 0, contentHash: null, record: null, events, titleTerms: [], contentTerms: [], tagTerms: [], dateTerms: [], lengths: [0, 0, 0] }
  }
  const active = record.status === 'active'
  const [titleTerms, contentTerms, tagTerms, dateTerms]: [string[], string[], string[], string[]] = active && terms ? fieldTerms(record, partitionToken(partition)) : [[], [], [], []]
  const lengths: [number, number, number] = !active ? [0, 0, 0] : terms ? [titleTerms.length, contentTerms.length, tagTerms.length] : fieldLengths(record)
  return {
    id: record.id,
    partition,
    seq,
    status: record.status,
    kind: record.kind,
    createdMs: parseInstant(record.createdAt) ?? 0,
    contentHash: active ? contentKeyHash(contentKey(record.kind, record.content)) : null,
    record,
    events,
    titleTerms,
    contentTerms,
    tagTerms,
    dateTerms,
    lengths,
  }
}

/**
 * The index tokens of a record's fields (title, content with the episode, tags with keywords and
 * topics, the ranking-only date words of `recordDateWords`): {@link scopedTerms} of `tokenize()`.
 */
function fieldTerms(record: MemoryRecord, token: string): [string[], string[], string[], string[]] {
  return [
    scopedTerms(token, tokenize(record.title ?? '')),
    scopedTerms(token, tokenize(searchableContent(record))),
    scopedTerms(token, tokenize(searchableTags(record).join('\n'))),
    scopedTerms(token, tokenize(recordDateWords(record))),
  ]
}

/** The number of tokens of the title, content and tags of {@link fieldTerms}, counted without making them (each surface word is one token). */
function fieldLengths(record: MemoryRecord): [number, number, number] {
  return [countTokens(record.title ?? ''), countTokens(searchableContent(record)), countTokens(searchableTags(record).join('\n'))]
}

let counted = 0
const countOne = () => { counted++ }
function countTokens(text: string): number {
  if (text === '') return 0
  counted = 0
  forEachSurface(text, countOne)
  return counted
}

/**
 * The text of an active record's FTS5 row (title, content, tags, dates: its index tokens, space
 * separated, as {@link recordRow} gives them), `undefined` when it has no token (no row).
 */
export function indexTerms(record: MemoryRecord, partition: string): [string, string, string, string] | undefined {
  const [title, content, tags, dates] = fieldTerms(record, partitionToken(partition))
  return title.length + content.length + tags.length + dates.length > 0 ? [title.join(' '), content.join(' '), tags.join(' '), dates.join(' ')] : undefined
}

/**
 * Folds a whole verified JSONL text into record rows (import, and the upgrade of a database
 * written by an older schema): the only path that holds every record at once.
 */
export function foldLines(text: string): { events: SqlEventRow[]; records: SqlRecordRow[] } {
  const state: MemoryRecordState = emptyRecordState(() => ({ update() {}, search: () => [], size: 0 }))
  const created = new Map<string, { seq: number; partition: string; record: MemoryRecord; events: number[] }>()
  const events: SqlEventRow[] = []
  const lines = text === '' ? [] : text.slice(0, -1).split('\n')
  for (const line of lines) {
    const event = parseMemoryLine(JSON.parse(line))
    if (typeof event === 'string') throw new Error(event)
    const partition = partitionKey(event.store, event.scope)
    events.push({ seq: event.seq, type: event.type, recordId: event.recordId, store: event.store, partition, digest: event.digest, line })
    const known = created.get(event.recordId)
    known?.events.push(event.seq)
    if (event.erased) {
      // The record was erased: its folded state is never needed, only its id.
      if (!known) created.set(event.recordId, { seq: event.seq, partition, record: { id: event.recordId, kind: 'erased', createdAt: event.at } as MemoryRecord, events: [event.seq] })
      state.erased.add(event.recordId)
      continue
    }
    if (event.type === 'erase') {
      state.records.delete(event.recordId)
      state.erased.add(event.recordId)
      continue
    }
    const record = foldEvent(state.records.get(event.recordId), event)
    state.records.set(record.id, record)
    if (event.type === 'remember') created.set(record.id, { seq: event.seq, partition, record, events: [event.seq] })
    else known!.record = record
  }
  const records = [...created.values()].map(({ seq, partition, record, events: seqs }) => recordRow(record, seq, partition, state.erased.has(record.id), seqs))
  return { events, records }
}

/**
 * Appends the drafts as lines after the chain head, in order, as one write of `tx`: checks each
 * event against the records it names (`known`: their rows, read in the same transaction), writes
 * the lines, the changed records and the partition stats, and removes the payload from every line
 * of a record erased by the drafts (its compaction, in the same transaction). Returns each event's
 * record after the event.
 *
 * @throws AgentError `MEMORY_WRITE_CONFLICT` when an event cannot apply (nothing is written),
 * `MEMORY_SQL_V1_ERASE` when an erased record has lines of log format version 1;
 * `MEMORY_SQL_HEADER_TEXT_ERASE` when one has lines with `audit.approvalReason` in their header (written before it moved to the payload).
 */
export async function commitDrafts(tx: SqlWriteTx, drafts: MemoryEventDraft[], known: Map<string, SqlStoredRecord>, { hash, terms }: { hash: (text: string) => string; terms: boolean }): Promise<MemoryRecord[]> {
  if (drafts.length === 1 && known.size === 0 && drafts[0]!.type === 'remember') return [await commitRemember(tx, drafts[0]!, hash, terms)]
  let { seq, digest } = await tx.head()
  const events: SqlEventRow[] = []
  const changed = new Map<string, { record: MemoryRecord; seq: number; partition: string; erased: boolean; events: number[] }>()
  const results: MemoryRecord[] = []
  const lookup = overlayLookup(changed, known)
  // Ids erased before this write or by one of its drafts (none in a plain remember).
  let erased: Set<string> | undefined
  for (const [id, row] of known) if (row.erased) (erased ??= new Set()).add(id)
  for (let index = 0; index < drafts.length; index++) {
    const draft = drafts[index]!
    const conflict = eventConflict(lookup, draft, erased)
    if (conflict) throw agentError('MEMORY_WRITE_CONFLICT', `the memory write was refused: ${conflict}`, 'read the record again and retry; nothing was saved', { recordId: draft.recordId })
    const formatted = formatMemoryLine(draft, seq + 1, digest, index < drafts.length - 1, hash)
    seq++
    digest = formatted.digest
    const partition = partitionKey(draft.store, draft.scope)
    events.push({ seq, type: draft.type, recordId: draft.recordId, store: draft.store, partition, digest: formatted.digest, line: formatted.line })
    const earlier = changed.get(draft.recordId)
    const record = foldEvent(earlier?.record ?? known.get(draft.recordId)?.record, formatted.event)
    const first = earlier?.seq ?? (draft.type === 'remember' ? seq : undefined)
    if (earlier) earlier.events.push(seq)
    changed.set(draft.recordId, { record, seq: first ?? 0, partition, erased: draft.type === 'erase', events: earlier?.events ?? [seq] })
    if (draft.type === 'erase') (erased ??= new Set()).add(draft.recordId)
    results.push(record)
  }
  const rows: SqlRecordRow[] = []
  const deltas = new Map<string, SqlPartitionStats>()
  for (const [id, { record, seq: created, partition, erased: gone, events: seqs }] of changed) {
    // A record changed by a later event keeps its creation seq: 0 here means "keep the stored one".
    const row = recordRow(record, created, partition, gone, seqs, terms)
    const before = known.get(id)?.record
    // A new record adds its row's stats; a changed one the difference to its stored row's.
    const delta = before ? addStats(rowStats(row), rowStats(recordRow(before, 0, partition, false, [], false)), -1) : rowStats(row)
    const sum = deltas.get(partition)
    deltas.set(partition, sum ? addStats(sum, delta) : delta)
    rows.push(row)
  }
  await tx.insertEvents(events)
  // The partition's row first: a records row may name it.
  for (const [partition, delta] of deltas) await tx.addStats(partition, delta)
  await tx.putRecords(rows)
  if (erased) for (const draft of drafts) if (draft.type === 'erase') await stripRecordLines(tx, draft.recordId, hash)
  return results
}

/**
 * {@link commitDrafts} of a write that is one `remember` draft naming no stored record (a plain
 * remember, the most common write): the same checks, line, row and stats, without the maps and
 * lists a write of several events needs.
 */
async function commitRemember(tx: SqlWriteTx, draft: MemoryEventDraft, hash: (text: string) => string, terms: boolean): Promise<MemoryRecord> {
  const { seq: head, digest: prev } = await tx.head()
  const conflict = eventConflict(noStoredRecord, draft)
  if (conflict) throw agentError('MEMORY_WRITE_CONFLICT', `the memory write was refused: ${conflict}`, 'read the record again and retry; nothing was saved', { recordId: draft.recordId })
  const seq = head + 1
  const formatted = formatMemoryLine(draft, seq, prev, false, hash)
  const partition = partitionKey(draft.store, draft.scope)
  const record = foldEvent(undefined, formatted.event)
  const row = recordRow(record, seq, partition, false, [seq], terms)
  await tx.insertEvents([{ seq, type: draft.type, recordId: draft.recordId, store: draft.store, partition, digest: formatted.digest, line: formatted.line }])
  await tx.addStats(partition, rowStats(row))
  await tx.putRecords([row])
  return record
}

const noStoredRecord = (): undefined => undefined

/** A record by id as a write sees it: changed by an earlier draft of the write, else as stored. */
function overlayLookup(changed: ReadonlyMap<string, { record: MemoryRecord }>, known: ReadonlyMap<string, SqlStoredRecord>): (id: string) => MemoryRecord | undefined {
  return id => changed.get(id)?.record ?? known.get(id)?.record
}

/** Whether a line holds in its header free text a line now holds in its payload (`audit.approvalReason` of a line written before the move): the chain's digest covers it. */
function heldInHeader(line: string): boolean {
  if (!line.includes('"approvalReason":')) return false
  const value = JSON.parse(line) as MemoryEventDraft
  return lineDraftOf(value) !== value
}

/** Compaction of one erased record: the payload leaves every line of it (headers and digests stay, so the chain verifies). */
async function stripRecordLines(tx: SqlWriteTx, id: string, hash: (text: string) => string): Promise<void> {
  for (const { seq, line } of await tx.eventLines(id)) {
    if (heldInHeader(line)) {
      throw agentError('MEMORY_SQL_HEADER_TEXT_ERASE', `record "${id}" has lines written before the approval reason left the line's header (audit.approvalReason, covered by the chain's digest)`, 'export the log (exportLog), compact it with `agent memory compact` (which re-chains it with the reason in the payload), and import it into a new database', { recordId: id })
    }
    const stripped = strippedMemoryLine(line, hash)
    if (stripped === undefined) {
      if ((JSON.parse(line) as { v: number }).v === 1) {
        throw agentError('MEMORY_SQL_V1_ERASE', `record "${id}" has lines of log format version 1, whose digest covers the content`, 'export the log (exportLog), compact it with `agent memory compact` (which rewrites it as version 2), and import it into a new database', { recordId: id })
      }
      continue
    }
    await tx.updateLine(seq, stripped)
  }
}


/** Options of {@link sqlMemoryAdapter}. */
export interface SqlAdapterOptions {
  /** Synchronous SHA-256 to hex (the digests of the chain). */
  hash: (text: string) => string
}

/** The adapter of a SQL store: the store contract, `hardDelete`, and the scope writes of retention, erasure and import (no in-memory `log`). */
export type SqlStoreAdapter = Omit<MemoryLogStoreAdapter, 'log'> & MemoryScopeWriter

/**
 * The {@link MemoryLogStoreAdapter} contract over a {@link SqlBackend}: the validation, events and
 * results of the JSONL store, with the state read from the database. `log` is absent (the store
 * has no in-memory log): `hardDelete` erases one record, and `writeScope` (scope-write.ts) runs
 * retention (`maxAge`, `maxItems`, `hardDelete`), scope erasure and import in one transaction.
 */
export function sqlMemoryAdapter(backend: SqlBackend, options: SqlAdapterOptions): SqlStoreAdapter {
  // How commitDrafts writes: the chain's hash, and whether the rows carry their terms.
  const writing = { hash: options.hash, terms: !backend.deferredTerms }
  const scopeSizes = new ScopeSizes()
  // better-sqlite3 writes synchronously: an awaited loop of writes would run in microtasks only,
  // so a write resolves after a turn of the event loop once 10 ms of work ran (src/log/turns.ts).
  const write = <T>(task: (tx: SqlWriteTx) => Promise<T>): Promise<T> => backend.write(task).then(writeTurns.pace)

  async function findDuplicate(tx: SqlWriteTx, target: MemoryTarget, input: { kind: string; content: string }, supersedes: readonly string[]): Promise<MemoryRecord | undefined> {
    const partition = partitionKey(target.store, target.scope)
    const candidates = await tx.duplicates(partition, contentKeyHash(contentKey(input.kind, input.content)))
    return candidates.find(record => record.kind === input.kind && record.status === 'active' && !supersedes.includes(record.id) && sameContent(record.content, input.content))
  }

  function inScope(row: SqlStoredRecord | undefined, target: MemoryTarget): MemoryRecord | undefined {
    const record = row?.record
    return record && record.store === target.store && sameScope(record.scope, target.scope) ? record : undefined
  }

  return {
    async append(target, input, appendOptions) {
      target = scopedTarget(target)
      checkInput(input)
      const audit = checkAudit(appendOptions)
      const at = currentInstant()
      const recordId = timeOrderedRecordId()
      const supersedes = input.supersedes && input.supersedes.length > 0 ? [...new Set(input.supersedes)] : []
      const outcome = await write<{ duplicate: MemoryRecord } | { record: MemoryRecord }>(async (tx) => {
        if (appendOptions.duplicates === 'skip') {
          const duplicate = await findDuplicate(tx, target, input, supersedes)
          if (duplicate) return { duplicate }
        }
        // A new random id needs no lookup (the primary key refuses a clash); superseded ids do.
        const known = supersedes.length > 0 ? await tx.records(supersedes) : new Map<string, SqlStoredRecord>()
        const missing = supersedes.filter(id => inScope(known.get(id), target)?.status !== 'active')
        if (missing.length > 0) {
          throw agentError('MEMORY_SUPERSEDE_NOT_FOUND', `${missing.map(id => `"${id}"`).join(', ')} ${missing.length === 1 ? 'is not an active record' : 'are not active records'} of the memory store "${target.store}"`, 'search the store for the current record ids and pass only those in `supersedes`; nothing was saved', { ids: missing })
        }
        const drafts = rememberDrafts(target, input, { recordId, at, audit, supersedes, versionOf: storedVersion(known) })
        const [record] = await commitDrafts(tx, drafts, known, writing)
        return { record: record! }
      })
      if ('duplicate' in outcome) {
        appendOptions.onDuplicate?.(cloneRecord(outcome.duplicate))
        return outcome.duplicate
      }
      return outcome.record
    },

    async delete(target, id, deleteOptions) {
      target = scopedTarget(target)
      const audit = checkDeleteOptions(deleteOptions)
      if (typeof id !== 'string') return undefined
      return write(async (tx) => {
        const known = await tx.records([id])
        const existing = inScope(known.get(id), target)
        if (!existing || existing.status === 'deleted') return undefined
        const [record] = await commitDrafts(tx, [tombstone('delete', target, existing, audit, deleteOptions.reason) as MemoryEventDraft], known, writing)
        return record
      })
    },

    async hardDelete(target, id, deleteOptions) {
      target = scopedTarget(target)
      const audit = checkDeleteOptions(deleteOptions)
      if (typeof id !== 'string') return false
      const erased = await write(async (tx) => {
        const known = await tx.records([id])
        const existing = inScope(known.get(id), target)
        if (!existing) return false
        // The erase event and the compaction of the record's lines, in one transaction.
        await commitDrafts(tx, [tombstone('erase', target, existing, audit, deleteOptions.reason) as MemoryEventDraft], known, writing)
        return true
      })
      if (erased) await backend.afterCompaction?.()
      return erased
    },

    async writeScope(target, build) {
      target = scopedTarget(target)
      const partition = partitionKey(target.store, target.scope)
      let erasing = false
      const written = await write(async (tx) => {
        const drafts = await build(scopeView(tx, partition))
        erasing = drafts.some(draft => draft.type === 'erase')
        if (drafts.length === 0) return []
        const ids = new Set<string>()
        for (const draft of drafts) {
          ids.add(draft.recordId)
          if (draft.type === 'supersede') ids.add(draft.supersededBy)
        }
        return commitDrafts(tx, drafts, await tx.records([...ids]), writing)
      })
      if (erasing) await backend.afterCompaction?.()
      return written
    },

    async read(target, id) {
      target = scopedTarget(target)
      if (typeof id !== 'string') return undefined
      return backend.read(partitionKey(target.store, target.scope), id)
    },

    async export(target) {
      target = scopedTarget(target)
      return backend.export(partitionKey(target.store, target.scope))
    },

    async changes(target, since) {
      target = scopedTarget(target)
      const partition = partitionKey(target.store, target.scope)
      const { head, changed } = await backend.changesSince(partition, since as SqlChainPoint | undefined)
      if (!changed) {
        // The head is read first: an event committed before the export is reported again next time, none is missed.
        const records = (await backend.export(partition)).filter(record => record.status === 'active')
        return { cursor: head, reset: true, records, removed: [] }
      }
      const records: MemoryRecord[] = []
      const removed: string[] = []
      for (const [id, row] of changed) {
        if (row.record) records.push(row.record)
        else removed.push(id)
      }
      return { cursor: head, reset: false, records, removed }
    },

    async search(target, query) {
      target = scopedTarget(target)
      // Validates the query exactly as every store does (MEMORY_QUERY_INVALID).
      searchRecords([], query)
      const partition = partitionKey(target.store, target.scope)
      const needle = query.query.toLowerCase()
      const limit = query.limit ?? DEFAULT_SEARCH_LIMIT
      const bySubstring = substringSearch(backend, partition, query, limit)
      if (query.mode === 'substring') return bySubstring
      return rankedSearch(backend, partition, query, limit, bySubstring, needle, scopeSizes)
    },
  }
}

/** The stored version of a record the write read (a superseded record: `rememberDrafts` asks for each). */
function storedVersion(known: ReadonlyMap<string, SqlStoredRecord>): (id: string) => number {
  return id => known.get(id)!.record!.version
}

/**
 * A new record id as {@link newRecordId} makes it (`mem_` and 32 hex digits), its first 12 digits
 * the current time in milliseconds: a SQL store's unique index on record ids then grows at its
 * right edge, where a random id touches a random leaf page (a page read and a page written per
 * write). The other 80 bits stay random.
 */
function timeOrderedRecordId(): string {
  const ms = Date.now()
  // The time part is made once per millisecond.
  if (ms !== idTime.ms) idTime = { ms, prefix: `mem_${ms.toString(16).padStart(12, '0').slice(-12)}` }
  if (idBytesUsed === ID_BYTES.length) {
    globalThis.crypto.getRandomValues(ID_BYTES)
    idBytesUsed = 0
  }
  let id = idTime.prefix
  for (let end = idBytesUsed + ID_RANDOM_BYTES; idBytesUsed < end; idBytesUsed++) id += HEX[ID_BYTES[idBytesUsed]!]
  return id
}

let idTime = { ms: Number.NaN, prefix: '' }
/** The random part of a time-ordered id: 80 bits, drawn for 256 ids at once (Web Crypto's `getRandomValues`, as `newRecordId`). */
const ID_RANDOM_BYTES = 10
const ID_BYTES = new Uint8Array(ID_RANDOM_BYTES * 256)
let idBytesUsed = ID_BYTES.length
const HEX = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, '0'))

/** The {@link MemoryScopeView} of one partition inside a write transaction. */
function scopeView(tx: SqlWriteTx, partition: string): MemoryScopeView {
  return {
    records: () => tx.partitionRecords(partition),
    activeCount: () => tx.activeCount(partition),
    lookup: ids => tx.records(ids),
    async duplicate(kind, content) {
      const candidates = await tx.duplicates(partition, contentKeyHash(contentKey(kind, content)))
      return candidates.find(record => record.kind === kind && record.status === 'active' && sameContent(record.content, content))
    },
  }
}

/**
 * The documented substring rule (`searchRecords` of the default search) answered by the database:
 * occurrences counted in SQL, pages in rank order until `limit` records pass the filters.
 */
async function substringSearch(backend: SqlBackend, partition: string, query: MemorySearchQuery, limit: number): Promise<MemorySearchHit[]> {
  const needle = haystackText(query.query)
  if (/[\u0000\u0001\uFFFD]/.test(query.query)) {
    // A query holding a character the stored text maps: the SQL count is only a superset here, so every candidate is counted exactly.
    const candidates = await backend.substring(partition, needle, { limit: Number.MAX_SAFE_INTEGER, offset: 0 })
    return searchRecords(candidates.map(row => row.record), { ...query, limit })
  }
  const hits: MemorySearchHit[] = []
  for (let offset = 0, page = Math.max(limit * 2, 20); hits.length < limit; offset += page, page *= 2) {
    const rows = await backend.substring(partition, needle, { limit: page, offset })
    for (const row of rows) if (hits.length < limit && recordMatchesFilters(row.record, query)) hits.push(row)
    if (rows.length < page) break
  }
  return hits
}

/** Default BM25F parameters (`DEFAULT_SEARCH_INDEX_OPTIONS` of the default ranking). */
const { fieldWeights, k1: K1, b: B } = DEFAULT_SEARCH_INDEX_OPTIONS
const WEIGHTS = [fieldWeights.title, fieldWeights.content, fieldWeights.tags, fieldWeights.dates]

/**
 * The ranked terms of a query (each a scoped term, see {@link scopedTerms}) with their weights:
 * each word of the query at 1, and the words of its synonym groups (synonyms.ts: "kid" and
 * "child") at the default ranking's synonym weight, as `queryTerms` of the default ranking gives
 * them. A synonym no record of the scope holds has no postings and adds nothing.
 */
export function weightedQueryTerms(token: string, words: readonly string[]): Map<string, number> {
  const { irregularForms, synonyms } = DEFAULT_SEARCH_INDEX_OPTIONS
  const weights = new Map<string, number>()
  const add = (word: string, weight: number) => {
    const [term] = scopedTerms(token, [word])
    weights.set(term!, Math.max(weights.get(term!) ?? 0, weight))
  }
  for (const word of words) {
    add(word, 1)
    if (synonyms.weight > 0) for (const other of synonymsOf(word, irregularForms)) add(other, synonyms.weight)
  }
  return weights
}

/** What a record row adds to its partition's stats (zeros unless active). */
export function rowStats(row: SqlRecordRow | undefined): SqlPartitionStats {
  const lengths = row?.lengths ?? [0, 0, 0]
  return {
    active: row?.status === 'active' ? 1 : 0,
    lengthSums: [lengths[0], lengths[1], lengths[2]],
    fieldCounts: [lengths[0] > 0 ? 1 : 0, lengths[1] > 0 ? 1 : 0, lengths[2] > 0 ? 1 : 0],
  }
}

/** `a + sign × b`, field by field. */
export function addStats(a: SqlPartitionStats, b: SqlPartitionStats, sign = 1): SqlPartitionStats {
  return {
    active: a.active + sign * b.active,
    lengthSums: [0, 1, 2].map(field => a.lengthSums[field]! + sign * b.lengthSums[field]!) as [number, number, number],
    fieldCounts: [0, 1, 2].map(field => a.fieldCounts[field]! + sign * b.fieldCounts[field]!) as [number, number, number],
  }
}

/** Per partition, the stats of these rows (import and upgrade). */
export function statsOf(rows: readonly SqlRecordRow[]): Map<string, SqlPartitionStats> {
  const stats = new Map<string, SqlPartitionStats>()
  for (const row of rows) stats.set(row.partition, addStats(stats.get(row.partition) ?? rowStats(undefined), rowStats(row)))
  return stats
}

/**
 * A query term held by more active records of the scope than this is common: the ranking then
 * scores candidates only (see {@link rankedSearch}). A scope with at most this many active
 * records is always scored whole.
 */
export const RANKING_CANDIDATES_PER_TERM = 200

/**
 * The default ranking over the database's postings: BM25F as `createSearchIndex` scores it
 * (`idf = ln(1 + (N − n + 0.5) / (n + 0.5))` over the partition's active records, field weights
 * title 2, content 1, tags 2, dates 1.5 (the date words of `recordDateWords`), k1 1.2, b 0.75; each query term once, a synonym's part times the
 * synonym weight: {@link weightedQueryTerms}), merged with the substring
 * rule as the default ranking does: the substring rule's top `limit` are kept, the other places
 * go to the best-ranked other records, a record found only by the substring rule scores 0 and
 * comes after the ranked ones; filters apply before the limit; ties go to the newest.
 * Not done here: the default ranking's correction of misspelt query words, RM3 feedback, the
 * proximity bonus and the tag boost.
 *
 * Top-k cut: when a query term is held by more than {@link RANKING_CANDIDATES_PER_TERM} active
 * records of the scope (a common term), only these candidates are scored (exactly, with the
 * scope's `n` and `N`): every record holding a rarer term, and the best
 * {@link RANKING_CANDIDATES_PER_TERM} × (common terms) records for all the query terms by the
 * database's own ranking, which puts records holding several terms first. A record left out holds
 * only common terms (low idf) and is not among the database's best. When the filters leave fewer
 * than `limit` of the candidates, every match is scored.
 */
async function rankedSearch(backend: SqlBackend, partition: string, query: MemorySearchQuery, limit: number, substringHits: Promise<MemorySearchHit[]>, needle: string, sizes: ScopeSizes): Promise<MemorySearchHit[]> {
  const words = [...new Set(tokenize(query.query))]
  const weights = weightedQueryTerms(partitionToken(partition), words)
  const terms = [...weights.keys()]
  // The substring rule's query runs beside the ranking's (Postgres: on another connection).
  substringHits.catch(() => {})
  const ranking = terms.length > 0 ? firstRanking(backend, partition, weights, sizes) : undefined
  ranking?.catch(() => {})
  const bySubstring = await substringHits
  const kept = new Set(bySubstring.map(hit => hit.record.id))
  const wanted = limit - kept.size
  let ranked: RankedRecords = { ranked: [], records: new Map() }
  if (ranking) {
    const first = await ranking
    ranked = !first.capped || countOthers(first.ranked, kept, query) >= wanted ? first.ranked : await exactRanking(backend, partition, weights, first.stats)
  }
  return mergeRanked(backend, partition, query, limit, bySubstring, ranked, wanted, words, needle)
}

/**
 * Active records per scope as the last search saw them, for at most {@link ScopeSizes.MAX} scopes:
 * a hint only, so that a search of a scope last seen small reads its statistics and its postings
 * at once (Postgres: in parallel) instead of one after the other.
 */
class ScopeSizes {
  static readonly MAX = 10_000
  private readonly sizes = new Map<string, number>()
  small(partition: string): boolean {
    const size = this.sizes.get(partition)
    return size !== undefined && size <= RANKING_CANDIDATES_PER_TERM
  }
  set(partition: string, size: number): void {
    this.sizes.delete(partition)
    this.sizes.set(partition, size)
    if (this.sizes.size > ScopeSizes.MAX) this.sizes.delete(this.sizes.keys().next().value!)
  }
}

/** The capped ranking when a term is common in the scope, else the exact one. */
async function firstRanking(backend: SqlBackend, partition: string, weights: QueryWeights, sizes: ScopeSizes): Promise<{ ranked: RankedRecords; stats: SqlPartitionStats; capped: boolean }> {
  if (sizes.small(partition)) {
    // Scored whole, whatever its size now (the exact ranking is always right; the hint is updated for the next search).
    const [stats, postings] = await Promise.all([backend.stats(partition), backend.postings(partition, [...weights.keys()])])
    sizes.set(partition, stats.active)
    return { ranked: rankPostings(postings, weights, stats), stats, capped: false }
  }
  const stats = await backend.stats(partition)
  sizes.set(partition, stats.active)
  const capped = stats.active > RANKING_CANDIDATES_PER_TERM ? await cappedRanking(backend, partition, weights, stats) : undefined
  return capped ? { ranked: capped, stats, capped: true } : { ranked: await exactRanking(backend, partition, weights, stats), stats, capped: false }
}

/** Scored records, best first (`[seq, score]`), with the records already read (the top-k cut reads them to count their terms). */
interface RankedRecords {
  ranked: Array<[number, { score: number; createdMs: number; id: string }]>
  records: Map<number, MemoryRecord>
  /** The score of a record not in `ranked` (the top-k cut); absent: such a record holds no query term. */
  score?: (record: MemoryRecord) => number
}

/** Scoped query term -> its weight ({@link weightedQueryTerms}). */
type QueryWeights = ReadonlyMap<string, number>

/** Every record holding a query term, scored from the database's postings. */
async function exactRanking(backend: SqlBackend, partition: string, weights: QueryWeights, stats: SqlPartitionStats): Promise<RankedRecords> {
  return rankPostings(await backend.postings(partition, [...weights.keys()]), weights, stats)
}

/** The postings scored, with each term's count of records taken from them. */
function rankPostings(postings: readonly SqlPosting[], weights: QueryWeights, stats: SqlPartitionStats): RankedRecords {
  const frequency = new Map<string, number>()
  const seen = new Set<string>()
  for (const posting of postings) {
    const key = `${posting.seq}\u0000${posting.term}`
    if (seen.has(key)) continue
    seen.add(key)
    frequency.set(posting.term, (frequency.get(posting.term) ?? 0) + 1)
  }
  return { ranked: scorePostings(postings, frequency, weights, stats), records: new Map() }
}

/**
 * The top-k cut: `undefined` when no term is held by more than {@link RANKING_CANDIDATES_PER_TERM}
 * records (the exact ranking then reads no more); else the candidates of every term, read and
 * scored from their own text (the terms `recordRow` indexes).
 */
async function cappedRanking(backend: SqlBackend, partition: string, weights: QueryWeights, stats: SqlPartitionStats): Promise<RankedRecords | undefined> {
  const terms = [...weights.keys()]
  const frequency = await backend.documentFrequencies(partition, terms)
  if (![...frequency.values()].some(count => count > RANKING_CANDIDATES_PER_TERM)) return undefined
  const common = [...frequency].filter(([, count]) => count > RANKING_CANDIDATES_PER_TERM).map(([term]) => term)
  const rare = [...frequency].filter(([, count]) => count <= RANKING_CANDIDATES_PER_TERM).map(([term]) => term)
  // Every record of a rare term, and the best of all the terms by the database's ranking (records holding several terms first).
  const candidates = new Set(await backend.termCandidates(partition, [...frequency.keys()], RANKING_CANDIDATES_PER_TERM * Math.max(common.length, 1)))
  if (rare.length > 0) for (const seq of await backend.termCandidates(partition, rare, RANKING_CANDIDATES_PER_TERM * rare.length)) candidates.add(seq)
  const records = await backend.bySeq(partition, [...candidates])
  const token = partitionToken(partition)
  const wanted = new Set(terms)
  const postings: SqlPosting[] = []
  for (const [seq, record] of records) if (record.status === 'active') postings.push(...recordPostings(record, seq, token, wanted))
  // A record the substring rule keeps but no term's candidates hold is scored from its text too.
  const score = (record: MemoryRecord) => scorePostings(recordPostings(record, 0, token, wanted), frequency, weights, stats)[0]?.[1].score ?? 0
  return { ranked: scorePostings(postings, frequency, weights, stats), records, score }
}

/** The postings of `terms` in a record, counted from its text as `recordRow` indexes it ({@link fieldTerms}). */
function recordPostings(record: MemoryRecord, seq: number, token: string, terms: ReadonlySet<string>): SqlPosting[] {
  const fields = fieldTerms(record, token)
  const lengths: [number, number, number] = [fields[0].length, fields[1].length, fields[2].length]
  const createdMs = parseInstant(record.createdAt) ?? 0
  const postings: SqlPosting[] = []
  fields.forEach((field, index) => {
    const counts = new Map<string, number>()
    for (const term of field) if (terms.has(term)) counts.set(term, (counts.get(term) ?? 0) + 1)
    for (const [term, count] of counts) postings.push({ seq, id: record.id, createdMs, lengths, term, field: index, count })
  })
  return postings
}

/** Records among the capped candidates that pass the filters and are not kept by the substring rule. */
function countOthers(capped: RankedRecords, kept: ReadonlySet<string>, query: MemorySearchQuery): number {
  let count = 0
  for (const [seq] of capped.ranked) {
    const record = capped.records.get(seq)
    if (record && !kept.has(record.id) && recordMatchesFilters(record, query)) count++
  }
  return count
}

/** BM25F of each record of the postings, each term's part times its weight, best first (ties: newest, then last created). `frequency`: records per term. */
function scorePostings(postings: readonly SqlPosting[], frequency: ReadonlyMap<string, number>, weights: QueryWeights, stats: SqlPartitionStats): RankedRecords['ranked'] {
  const scores = new Map<number, { score: number; createdMs: number; id: string }>()
  const average = [0, 1, 2].map(field => Math.max(stats.lengthSums[field]! / Math.max(stats.fieldCounts[field]!, 1), 1e-9))
  // Per record and term: tf' summed over the fields, then the saturation per term.
  const weighted = new Map<number, Map<string, number>>()
  for (const posting of postings) {
    // The dates field: the same length in every record that has one, so a normalization of 1.
    const tf = posting.field === 3 ? WEIGHTS[3]! * posting.count : WEIGHTS[posting.field]! * posting.count / (1 - B + B * posting.lengths[posting.field]! / average[posting.field]!)
    let byTerm = weighted.get(posting.seq)
    if (!byTerm) weighted.set(posting.seq, byTerm = new Map())
    byTerm.set(posting.term, (byTerm.get(posting.term) ?? 0) + tf)
    if (!scores.has(posting.seq)) scores.set(posting.seq, { score: 0, createdMs: posting.createdMs, id: posting.id })
  }
  const live = Math.max(stats.active, 1)
  for (const [seq, byTerm] of weighted) {
    let score = 0
    for (const [term, tf] of byTerm) {
      const n = frequency.get(term) ?? 1
      score += (weights.get(term) ?? 1) * Math.log(1 + (live - n + 0.5) / (n + 0.5)) * tf * (K1 + 1) / (tf + K1)
    }
    scores.get(seq)!.score = score
  }
  return [...scores].sort((a, b) => b[1].score - a[1].score || b[1].createdMs - a[1].createdMs || b[0] - a[0])
}

/**
 * The records of `entries` (scored, in the caller's order) with their scores, read a page at a
 * time as the caller asks for more: the first page twice `limit` (at least 20), each next one
 * twice the last; records already `read` are not read again, a record gone since is skipped.
 */
async function* recordsInOrder(backend: SqlBackend, partition: string, entries: RankedRecords['ranked'], read: ReadonlyMap<number, MemoryRecord>, limit: number): AsyncGenerator<{ record: MemoryRecord; score: number }> {
  for (let at = 0, page = Math.max(limit * 2, 20); at < entries.length; at += page, page *= 2) {
    const slice = entries.slice(at, at + page)
    const missing = slice.filter(([seq]) => !read.has(seq)).map(([seq]) => seq)
    const records = missing.length > 0 ? await backend.bySeq(partition, missing) : new Map<number, MemoryRecord>()
    for (const [seq, { score }] of slice) {
      const record = read.get(seq) ?? records.get(seq)
      if (record) yield { record, score }
    }
  }
}

/**
 * A full substring page as the default ranking keeps it (`wordsFirstAtFloor`): at its lowest
 * substring score, records holding a word of the query (a ranking score above 0) go first, then
 * the newest. The contenders are ranked records not on the page, read newest first, a page at a
 * time, until `limit` of them pass the filters at that substring score; their ranking scores
 * join `scoreOf`.
 */
async function wordsFirstPage(backend: SqlBackend, partition: string, query: MemorySearchQuery, limit: number, page: MemorySearchHit[], ranked: RankedRecords['ranked'], read: Map<number, MemoryRecord>, rankScore: (record: MemoryRecord) => number, scoreOf: Map<string, number>): Promise<MemorySearchHit[]> {
  const substringOf = (hit: MemorySearchHit) => hit.score
  const holdsWord = (hit: MemorySearchHit) => rankScore(hit.record) > 0
  if (!floorLacksWord(page, limit, substringOf, holdsWord)) return page
  const floor = page[page.length - 1]!.score
  const onPage = new Set(page.map(hit => hit.record.id))
  const newest = ranked.filter(([, { id, score }]) => score > 0 && !onPage.has(id)).sort((a, b) => b[1].createdMs - a[1].createdMs || b[0] - a[0])
  const contenders: MemorySearchHit[] = []
  for await (const { record, score } of recordsInOrder(backend, partition, newest, read, limit)) {
    const substring = substringScoreOf(record, query)
    if (substring !== floor) continue
    contenders.push({ record, score: substring })
    scoreOf.set(record.id, score)
    if (contenders.length === limit) break
  }
  const createdOf = (hit: MemorySearchHit) => parseInstant(hit.record.createdAt) ?? 0
  return wordsFirstAtFloor(page, limit, substringOf, contenders, holdsWord, (a, b) => createdOf(b) - createdOf(a))
}

/** The substring rule's hits and the best other ranked records that pass the filters, merged into the top `limit`. */
async function mergeRanked(backend: SqlBackend, partition: string, query: MemorySearchQuery, limit: number, bySubstring: MemorySearchHit[], { ranked, records: read, score: scoreOutside }: RankedRecords, wanted: number, words: readonly string[], needle: string): Promise<MemorySearchHit[]> {
  const kept = new Set(bySubstring.map(hit => hit.record.id))
  const scoreOf = new Map<string, number>()
  const others: MemorySearchHit[] = []
  // Records in rank order until enough pass the filters.
  if (wanted > 0) {
    for await (const { record, score } of recordsInOrder(backend, partition, ranked, read, limit)) {
      if (kept.has(record.id)) scoreOf.set(record.id, score)
      else if (recordMatchesFilters(record, query)) {
        others.push({ record, score })
        if (others.length === wanted) break
      }
    }
  }
  // Scores of kept records ranked below the pages read.
  for (const [, { id, score }] of ranked) if (kept.has(id) && !scoreOf.has(id)) scoreOf.set(id, score)
  const rankScore = (record: MemoryRecord) => scoreOf.get(record.id) ?? scoreOutside?.(record) ?? 0
  const page = wanted <= 0 ? await wordsFirstPage(backend, partition, query, limit, bySubstring, ranked, read, rankScore, scoreOf) : bySubstring
  const merged = [...page.map(hit => ({ record: hit.record, score: rankScore(hit.record) })), ...others]
  merged.sort((a, b) => b.score - a.score || (parseInstant(b.record.createdAt) ?? 0) - (parseInstant(a.record.createdAt) ?? 0))
  const wantedTerms = new Set(words)
  return merged.slice(0, limit).map(({ record, score }) => ({ record, score: Math.round(score * 1e4) / 1e4, snippet: snippetOf(record.content, wantedTerms, needle) }))
}

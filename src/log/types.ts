/**
 * Types of the event log engine: what it asks of the events it stores ({@link LogFold}), its
 * options, and what its operations return. The engine knows lines, digests, offsets and
 * checkpoints; what an event means (a record created, superseded, deleted) is the fold's.
 */
import type { Workspace } from '../workspace/types.ts'

/** What the log needs of every event: its type (which names its payload fields) and the record it is about. */
export interface LogEventDraft {
  type: string
  recordId: string
}

/** The chain members the log writes on every line (format: docs/log-format.md). */
export interface LogLineChain {
  /**
   * Format version: 1 (digest over the whole line), 2 (digest over the header and `payloadDigest`)
   * or 3 (as 2, with `payloadDigest` and default payload members left out of the line).
   */
  v: 1 | 2 | 3
  /** 1 on the first line, +1 per line, no gaps. */
  seq: number
  /** `digest` of the previous line; `null` on the first line. */
  prev: string | null
  /** SHA-256 hex of the canonical JSON of the header (v2) or of the line without `digest` (v1). */
  digest: string
  /** Version 2: SHA-256 hex of the canonical JSON of the payload fields (version 3: in the line only once erased). */
  payloadDigest?: string
  /** On every line of a multi-line write except its last. */
  more?: true
  /** Version 2: the payload was removed because the record was erased (header and `payloadDigest` stay). */
  erased?: true
}

/** One line of the log as read back: the event and its chain members. */
export type LogEvent<Draft extends LogEventDraft> = Draft & LogLineChain

/** A checked, committed line's event and its 1-based line number (what replay folds). */
export interface FoldedLine<Draft extends LogEventDraft> {
  event: LogEvent<Draft>
  line: number
}

/** The members of the events a log holds, split into header and payload (format version 2 digests them apart). */
export interface LogEventSchema {
  /** Header members covered by `digest`, besides `digest` itself (the chain members `v`, `seq`, `prev`, `more`, `payloadDigest` included). */
  headerFields: readonly string[]
  /** Payload members of each event type, covered by `payloadDigest`: what erasure removes. */
  payloadFields: Readonly<Record<string, readonly string[]>>
  /** The event type that erases a record: compaction removes the payload of that record's other lines. */
  eraseType: string
  /** Members whose parsed values lines of one read share when their text repeats (short texts only). */
  sharedFields: ReadonlySet<string>
  /** The member whose values are frozen and shared by every event of one open log (the scope). */
  internedField: string
  /**
   * Payload members a version 3 line leaves out when they have this value (compared as canonical
   * JSON), and a reader puts back (one shared value per member: never mutate it). Default: none.
   */
  payloadDefaults?: Readonly<Record<string, unknown>>
  /** Payload members a version 3 line leaves out when they equal another member of the event (`{ createdAt: 'at' }`), put back on read. Default: none. */
  payloadSameAs?: Readonly<Record<string, string>>
  /**
   * The draft as its line holds it: moves free text a writer put in a header member (which the
   * chain's digests cover, so erasure cannot remove it) into a payload member, which erasure
   * removes. Returns `draft` itself when there is nothing to move; never mutates it. A line whose
   * event this would change (written before the move existed) is re-chained when compaction
   * strips it, as a version 1 line is. Default: none (drafts are written as given).
   */
  lineDraft?: <Draft extends LogEventDraft>(draft: Draft) => Draft
}

/** Why a write cannot apply: the draft that conflicts and the reason. */
export interface LogConflict<Draft> {
  draft: Draft
  reason: string
}

/**
 * The fold of a log: how its events change a state. The engine replays lines into it, checks
 * every write against it, and persists it in checkpoints; it never looks inside the state.
 *
 * @typeParam State the folded state (kept in memory per open log).
 * @typeParam Draft an event before the log gives it its chain members.
 * @typeParam Result what applying one event returns (the record after it).
 */
export interface LogFold<State, Draft extends LogEventDraft, Result> {
  schema: LogEventSchema
  /** Checks the event members of a parsed line (the chain members are checked already); returns the event or why it is malformed. */
  parse(value: Record<string, unknown>, erased: boolean): LogEvent<Draft> | string
  /** A new empty state. */
  empty(): State
  /** Why `drafts` cannot apply one after the other to `state`, or `undefined`. Must not change `state`. */
  conflict(state: State, drafts: readonly Draft[]): LogConflict<Draft> | undefined
  /**
   * Applies one event to `state` and returns its result.
   *
   * @throws Error with the reason when it cannot apply (unless `checked`: {@link LogFold.conflict} already passed on this state).
   */
  apply(state: State, event: Draft, checked: boolean): Result
  /** Folds an `eraseType` event read from the log (a record seen before may have had events skipped in between). */
  replayErase(state: State, event: Draft): void
  /**
   * After a compaction swapped the rewritten log in (the state is kept: compaction changes no
   * event): drops what still holds erased payloads in memory (the memory fold: search indexes
   * that took an erase), so the state is what a replay of the compacted log makes. Returns
   * `'replay'` when it cannot make that state from the one kept: the log then replays the
   * compacted log from its start.
   */
  compacted?(state: State): 'replay' | undefined | void
  /** Marks `id` erased without folding its events (its erase event comes later in the same read, so its content never enters memory). */
  markErased(state: State, id: string): void
  /** Whether `id` was erased. */
  isErased(state: State, id: string): boolean
  /** Whether the state holds record `id`. */
  has(state: State, id: string): boolean
  /** The interned values (see {@link LogEventSchema.internedField}) the state holds, to share again after a checkpoint load. */
  internedValues(state: State): Iterable<unknown>
  /** How the state is written into and read from a checkpoint; without it the log writes none. */
  checkpoint?: LogCheckpointCodec<State>
  /** How the state splits into partitions a checkpoint loads one at a time; without it a checkpoint loads whole. */
  partitions?: LogPartitions<State, Draft>
}

/**
 * The partitions of a fold's state (the memory fold: one per store and scope). A checkpoint may
 * hold each partition in its own section that is read only when the partition is first used:
 * the engine loads the partitions a read or a write names before running it; the events of lines
 * after the checkpoint whose partition is not loaded are kept, checked and chained, and folded when
 * that partition loads.
 */
export interface LogPartitions<State, Draft extends LogEventDraft> {
  /** The partition an event belongs to (every event of a record names the same one). */
  of(event: Draft): string
  /** Of `keys` (`undefined`: every partition), those whose section is not loaded yet; empty when all are (a list the caller only reads). */
  missing(state: State, keys: readonly string[] | undefined): readonly string[]
  /**
   * Reads, checks and folds into `state` the sections of the partitions `keys` (from
   * {@link LogPartitions.missing}) out of `source`, the checkpoint the state was decoded from.
   *
   * @throws Error when a section cannot be read, does not have the digest the checkpoint names
   * or is malformed (the engine then replays the log in full, with a `MEMORY_LOG_CHECKPOINT_IGNORED` warning).
   */
  load(state: State, keys: readonly string[], source: LogCheckpointSource): Promise<void>
  /**
   * Called, in log order, for each event of a line after the checkpoint that the engine keeps for
   * its partition (not loaded yet) and folds once that partition loads: the fold notes what the
   * event's place in the log decides (the memory fold: a created record's creation rank, so that
   * records keep the order a replay gives). Default: nothing.
   */
  deferred?(state: State, event: Draft): void
  /**
   * Called before a read of the whole state (every partition named), once every section is
   * loaded ({@link LogPartitions.load}) and the events kept for them folded: the fold may put its
   * state in the order a replay gives. Reads of named partitions do not call it (they see each
   * partition's own order only). Default: nothing.
   */
  settled?(state: State): void
  /** The partitions loaded now (their records are in memory), for {@link MemoryLogOptions.maxLoadedPartitions}. */
  loaded?(state: State): { readonly size: number; keys(): Iterable<string>; has(key: string): boolean }
  /**
   * Drops partition `key` from memory when its state is exactly what the checkpoint's section
   * holds (no event folded into it since that section was read or written), so that
   * {@link LogPartitions.missing} names it again and the next use loads the section. Returns
   * whether it was dropped.
   */
  evict?(state: State, key: string): boolean
}

/** The checkpoint a state was decoded from, for sections read on first use. */
export interface LogCheckpointSource {
  /** Bytes `start` to `end` (exclusive) of the checkpoint. @throws Error when it is gone or shorter. */
  read(start: number, end: number): Promise<Uint8Array>
  /** SHA-256 hex of a text. */
  digest(text: string): string | Promise<string>
  /** The frozen value of the log equal to `value` (see {@link LogEventSchema.internedField}), so that loaded records share it with later lines; `value` when there is none yet. */
  intern?(value: unknown): unknown
}

/** The state part of a checkpoint (the log writes the stamp line that binds it to the log). */
export interface LogCheckpointCodec<State> {
  /** `type` member of the stamp line: a checkpoint of another type is ignored. */
  type: string
  /** Version written; {@link LogCheckpointCodec.reads} lists the versions read. */
  version: number
  reads: readonly number[]
  /**
   * The lines after the stamp (each ended by `\n`) and members added to the stamp. May yield to
   * the event loop between slices; the state does not change meanwhile (the log's lock is held).
   */
  encode(state: State, digest: (text: string) => string | Promise<string>, source: LogCheckpointSource): Promise<LogCheckpointBody>
  /** Why the codec's stamp members are malformed, or `undefined`. */
  checkStamp(stamp: Record<string, unknown>): string | undefined
  /**
   * How many bytes after the stamp line {@link LogCheckpointCodec.decode} reads (the rest is read
   * on first use through {@link LogPartitions.load}); `undefined`: the whole checkpoint.
   */
  headBytes?(stamp: Record<string, unknown>): number | undefined
  /**
   * The state of a checkpoint: `text` is the whole checkpoint, `bodyStart` where the line after
   * the stamp begins. `digest` is `undefined` without a synchronous SHA-256 (derived parts that
   * need one are then left out).
   *
   * @throws Error when the body is malformed (the log is then replayed in full).
   */
  decode(text: string, bodyStart: number, stamp: Record<string, unknown>, digest: ((text: string) => string) | undefined): State
  /** How a decoded checkpoint state differs from the state a replay of the lines it covers folds, or `undefined` when they agree (verification). */
  difference(checkpoint: State, replayed: State): string | undefined
}

/** What {@link LogCheckpointCodec.encode} gives: members added to the stamp, the lines after it, and what to do once it is stored. */
export interface LogCheckpointBody {
  stamp: Record<string, unknown>
  /** The lines after the stamp, each ended by `\n`. */
  body: string
  /** Called once the checkpoint was stored, with the byte offset where `body` starts in it (sections not loaded now live there). */
  stored?(bodyStart: number): void
}

/** Options of an open log. */
export interface MemoryLogOptions {
  /** `fsync` every write (fs driver): durable against power loss, slower (see `npm run bench`). Default `false`. */
  fsync?: boolean
  /**
   * `true`: reads skip a corrupt complete line (reported once through `onWarning`) instead of
   * throwing `MEMORY_LOG_CORRUPT`; writes to such a log still throw. Default `false`.
   */
  readPastCorruption?: boolean
  /** Receives warnings (a torn tail moved aside, a corrupt line skipped, a checkpoint ignored). Default: `console.warn`. */
  onWarning?: (warning: MemoryLogWarning) => void
  /**
   * Persist a checkpoint of the folded state (key `<log key>.checkpoint`) after a write once the
   * log has grown since the last one by this many lines and by a quarter of the lines that one
   * covers ({@link CHECKPOINT_GROWTH}: a checkpoint costs time in proportion to the state, so
   * its cost per appended line stays constant as the log grows), and at every compaction; a cold
   * open then replays only the lines after it (see docs/log-format.md, "Checkpoints"). `false`:
   * never write nor read checkpoints. Default {@link DEFAULT_CHECKPOINT_EVERY} (10,000 lines).
   */
  checkpointEvery?: number | false
  /**
   * At most this many partitions ({@link LogPartitions}: the memory fold's store and scope) stay
   * loaded after an operation: beyond it the least recently used partitions whose checkpoint
   * section holds exactly their state are dropped from memory, and loaded again from that section
   * on their next use (one ranged read, a digest check and an inflate). Partitions with events
   * folded after the checkpoint stay until a checkpoint covers them. Default: no bound.
   */
  maxLoadedPartitions?: number
}

/** Default {@link MemoryLogOptions.checkpointEvery}: lines appended between two checkpoints, at least. */
export const DEFAULT_CHECKPOINT_EVERY = 10_000

/**
 * A new checkpoint also waits until the log has grown by this fraction of the lines the last one
 * covers (at 100,000 lines: every 25,000 lines, not 10,000). Writing one costs about 6 µs per
 * record held (`checkpointWriteMs` in `npm run bench`), so a fixed interval would make its cost
 * per appended line grow with the log; the tail a cold open replays stays under a fifth of it.
 */
export const CHECKPOINT_GROWTH = 0.25

/** A warning of the log engine. */
export interface MemoryLogWarning {
  code: 'MEMORY_LOG_TORN_TAIL' | 'MEMORY_LOG_LINE_SKIPPED' | 'MEMORY_LOG_CHECKPOINT_IGNORED' | 'MEMORY_LOG_CHECKPOINT_FAILED'
  key: string
  message: string
  /**
   * `MEMORY_LOG_TORN_TAIL`: the quarantine key; `MEMORY_LOG_LINE_SKIPPED`: the line number and
   * reason; `MEMORY_LOG_CHECKPOINT_IGNORED` (a checkpoint that does not match the log, so the log
   * is replayed in full) and `MEMORY_LOG_CHECKPOINT_FAILED` (a checkpoint could not be written;
   * nothing else is affected): the checkpoint key and reason.
   */
  details: Record<string, unknown>
}

/** What a read or a write of an open log touches. */
export interface LogAccessOptions {
  /**
   * The partitions ({@link LogPartitions.of}) the callback reads: only their checkpoint sections
   * are loaded before it runs; it must not look at other partitions. Default: every partition.
   */
  partitions?: readonly string[]
}

/** What {@link EventLog.peek} returns when the state is not known current in this turn. */
export const NOT_NOW: unique symbol = Symbol('not now')

/** An open log: the folded state of one workspace key, kept current. */
export interface EventLog<State, Draft extends LogEventDraft, Result> {
  readonly workspace: Workspace
  /** Workspace key of the JSONL value, for example `memory:memory.jsonl`. */
  readonly key: string
  /**
   * Runs `read` on the current state (after taking in lines other writers added). `read` must
   * not mutate the state nor keep it past its return.
   *
   * @throws AgentError `MEMORY_LOG_CORRUPT` when the log fails verification; read errors of the workspace.
   */
  view<T>(read: (state: State) => T, options?: LogAccessOptions): Promise<T>
  /**
   * Runs `read` on the state now, in this turn, when it is known current without waiting: the
   * workspace answers `statNow` (fs, memory), the value has the size and identity last read, and
   * every partition named is loaded (the fast path of {@link view}, without its promise).
   * Otherwise returns {@link NOT_NOW} without running `read`: call {@link view}. Same rules for
   * `read` as {@link view}.
   *
   * @throws read errors of the workspace's `statNow`; whatever `read` throws.
   */
  peek?<T>(read: (state: State) => T, options?: LogAccessOptions): T | typeof NOT_NOW
  /**
   * Appends the events `build` returns as one all-or-nothing write. `build` runs under the log's
   * lock with the current state; it may throw to write nothing, and it runs again when another
   * process or client appended first. Returns each event's result.
   *
   * @throws AgentError `MEMORY_WORKSPACE_READ_ONLY` when the workspace is read-only;
   * `MEMORY_LOG_CORRUPT`; `MEMORY_EVENT_CONFLICT` when an event cannot apply (nothing written);
   * `MEMORY_LOG_BUSY` when other writers kept winning for 1,000 attempts; whatever `build`
   * throws; write errors of the workspace.
   */
  write(build: (state: State) => Draft[] | Promise<Draft[]>, options?: LogAccessOptions): Promise<Result[]>
  /** Rewrites the log atomically (see `compactLog`). */
  compact(): Promise<MemoryLogCompaction>
  /**
   * Writes a checkpoint of the current state now (key `<log key>.checkpoint`, replaced
   * atomically, only while the log is still at the offset it covers). Returns `false` when
   * nothing was written (checkpoints off, read-only workspace, empty log, a torn tail or skipped
   * lines, or another writer appended meanwhile).
   *
   * @throws AgentError `MEMORY_LOG_CORRUPT`; write errors of the workspace.
   */
  checkpoint(): Promise<boolean>
  /**
   * Resolves once the background work this open log has scheduled so far (a threshold or index
   * checkpoint, written after the turn that scheduled it) has finished, written or not. Never
   * rejects: a failed checkpoint is a `MEMORY_LOG_CHECKPOINT_FAILED` warning. For a graceful
   * shutdown, and for tests that look at the checkpoint file.
   */
  settled(): Promise<void>
  /**
   * Tells the log that derived state over `records` records (a partition's search index) was
   * just built. A large one (at least `checkpointEvery` records) is worth persisting: a checkpoint
   * is scheduled, so that the next cold open restores it instead of building it again.
   */
  indexBuilt(records: number): void
  /** Partitions loaded in memory now (see {@link MemoryLogOptions.maxLoadedPartitions}); 0 for a fold without partitions. */
  loadedPartitions?(): number
  /**
   * Calls `listener` with the key of every partition this open log drops from memory from now on
   * (the bound of {@link MemoryLogOptions.maxLoadedPartitions}), so that what is derived from it
   * elsewhere (a vector index) can be dropped too. Adding the same function again adds nothing.
   */
  onPartitionDropped?(listener: (partition: string) => void): void
}

/** Result of `verifyLog`. */
export interface MemoryLogVerification {
  /** True when every complete line verifies (a torn tail alone does not make the log bad). */
  ok: boolean
  /** Number of complete (newline-ended) lines in the log. */
  lines: number
  /** The first line that fails, 1-based, and why. */
  firstBad?: { line: number; reason: string }
  /** Uncommitted text at the end (torn line or unfinished write): first line it starts on and its size in UTF-8 bytes. */
  torn?: { line: number; bytes: number }
}

/** Result of `compactLog`. */
export interface MemoryLogCompaction {
  /** Lines in the log after compaction (every event is kept). */
  lines: number
  /** Size in UTF-8 bytes before and after. */
  bytesBefore: number
  bytesAfter: number
  /** Lines whose payload was removed because their record was erased. */
  erasedLines: number
  /** True when version 1 lines were rewritten as version 2 (new digests from line 1 on). */
  rechained: boolean
}

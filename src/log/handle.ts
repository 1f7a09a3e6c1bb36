/**
 * The state of one open log (a workspace key folded by one fold), shared by every operation on
 * it: the folded state, how far the value was read (lines, bytes, last digest), and the
 * checkpoint bookkeeping. One handle per (fold, workspace object, key).
 */
import { agentError } from '../errors.ts'
import type { Workspace } from '../workspace/types.ts'
import type { FoldedLine, LogEventDraft, LogFold, MemoryLogOptions, MemoryLogWarning } from './types.ts'

/** An open log's handle. `State`, `Draft` and `Result` are the fold's. */
export interface LogHandle<State = unknown, Draft extends LogEventDraft = LogEventDraft, Result = unknown> {
  fold: LogFold<State, Draft, Result>
  workspace: Workspace
  key: string
  lockKey: string
  options: MemoryLogOptions
  state: State
  /** Committed lines folded into `state`. */
  lines: number
  lastDigest: string | null
  /** Byte length of the committed text. */
  offset: number
  /** Size and identity of the value when last read; `undefined` forces a read. */
  seen: { size: number; id: string | undefined } | undefined
  /** Uncommitted bytes after `offset` when last read. */
  tail: Uint8Array
  /** The log holds version 1 lines (compaction must re-chain to erase from them). */
  hasV1: boolean
  /** Corrupt lines skipped (only with `readPastCorruption`). */
  skipped: number
  /** Byte offset where the last committed line starts (stamped into checkpoints). */
  lastLineStart: number
  /** Lines covered by the last checkpoint loaded or written by this handle. */
  checkpointLines: number
  /** A threshold checkpoint is scheduled or being written. */
  checkpointScheduled?: boolean
  /** Settles when the checkpoint scheduled last has finished (written, skipped or failed). */
  checkpointRun?: Promise<void>
  /** Large indexes built so far (`indexBuilt`), and how many of them the last checkpoint written came after. */
  indexesBuilt: number
  checkpointIndexes: number
  /** Frozen interned values (scopes) by their canonical JSON, shared by the events replay and writes fold. */
  interned: Map<string, unknown>
  /** Partitions operations named, each with the tick of {@link LogHandle.useClock} it was last used at (only with `maxLoadedPartitions`; eviction.ts). */
  used: Map<string, number>
  /** The use clock of {@link LogHandle.used}: ticks once per partition an operation names. */
  useClock: number
  /**
   * Events of committed lines whose partition's checkpoint section is not loaded, per partition in
   * log order (checked and chained already): folded when that partition loads (fold-lines.ts).
   */
  deferred: Map<string, Array<FoldedLine<Draft>>>
  /** Record ids of the erase events among {@link LogHandle.deferred}. */
  deferredErases: Set<string>
  /** Called with the key of each partition dropped from memory (`EventLog.onPartitionDropped`). */
  dropListeners: Set<(partition: string) => void>
}

/** Empty bytes (a missing value reads as an empty log). */
export const EMPTY = new Uint8Array(0)
export const utf8Decoder = new TextDecoder('utf-8')
/** Attempts of one write or compaction against writers of other processes before `MEMORY_LOG_BUSY`. */
export const MAX_WRITE_ATTEMPTS = 1000

const handles = new WeakMap<LogFold<any, any, any>, WeakMap<Workspace, Map<string, LogHandle<any, any, any>>>>()

/** The handle of `key` (`memory/x.jsonl` and `memory:x.jsonl` name one value) folded by `fold`, created on first use. */
export function openHandle<State, Draft extends LogEventDraft, Result>(fold: LogFold<State, Draft, Result>, workspace: Workspace, key: string, options: MemoryLogOptions): LogHandle<State, Draft, Result> {
  key = key.replace(/[/\\]/g, ':')
  let byWorkspace = handles.get(fold)
  if (!byWorkspace) handles.set(fold, byWorkspace = new WeakMap())
  let byKey = byWorkspace.get(workspace)
  if (!byKey) byWorkspace.set(workspace, byKey = new Map())
  let handle = byKey.get(key) as LogHandle<State, Draft, Result> | undefined
  if (!handle) {
    handle = scratchHandle(fold, workspace, key, options)
    byKey.set(key, handle)
  }
  return handle
}

/** A handle that no registry holds (verification reads the log into one). */
export function scratchHandle<State, Draft extends LogEventDraft, Result>(fold: LogFold<State, Draft, Result>, workspace: Workspace, key: string, options: MemoryLogOptions): LogHandle<State, Draft, Result> {
  return { ...emptyPosition(fold), fold, workspace, key, lockKey: `${key}.lock`, options, used: new Map(), useClock: 0, dropListeners: new Set() }
}

function emptyPosition<State>(fold: LogFold<State, any, any>) {
  return { state: fold.empty(), lines: 0, lastDigest: null, offset: 0, seen: undefined, tail: EMPTY, hasV1: false, skipped: 0, lastLineStart: 0, checkpointLines: 0, interned: new Map<string, unknown>(), indexesBuilt: 0, checkpointIndexes: 0, deferred: new Map<string, Array<FoldedLine<any>>>(), deferredErases: new Set<string>() }
}

/** Forgets everything read: the next operation replays the value from the start. */
export function reset(handle: LogHandle<any, any, any>): void {
  Object.assign(handle, emptyPosition(handle.fold))
}

/** @throws AgentError `MEMORY_WORKSPACE_READ_ONLY` when the workspace cannot be written. */
export function requireWritable(handle: LogHandle<any, any, any>): void {
  if (!handle.workspace.writable) {
    throw agentError('MEMORY_WORKSPACE_READ_ONLY', `the workspace is read-only, so the memory log "${handle.key}" cannot be written`, 'give the agent a writable workspace, or set the store\'s `write.mode` to "off"', { key: handle.key })
  }
}

/** Reports a warning through `onWarning`, or `console.warn` when none is set. */
export function warn(handle: LogHandle<any, any, any>, warning: MemoryLogWarning): void {
  if (handle.options.onWarning) handle.options.onWarning(warning)
  else console.warn(`${warning.code}: ${warning.message}`)
}

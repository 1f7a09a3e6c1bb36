/**
 * The head anchor: a small value beside the log (`<key>.head`) naming how many lines the log had
 * and the digest of the last one, so that a log cut at a line boundary is reported instead of
 * read as a shorter, valid log. The head is written shortly after writes (at most one write per
 * {@link HEAD_DELAY_MS}, only while the log is still the size it names) and at once after a
 * compaction. It never names more than the log held when it was written, so a log shorter than
 * its head lost lines. Its limit: lines appended in the last {@link HEAD_DELAY_MS} before a
 * crash or a cut are not yet anchored. It holds no record content.
 */
import { utf8Decoder, type LogHandle } from './handle.ts'

/** Longest time, in ms, between a write and the head write that anchors it. */
export const HEAD_DELAY_MS = 50

const TYPE = 'log-head'

/** What a head names: the log had `lines` lines, `offset` bytes, and line `lines` had `lastDigest`. */
export interface LogHead {
  lines: number
  offset: number
  lastDigest: string
}

/** The workspace key of the head anchor of the log at `logKey`. */
export function headKey(logKey: string): string {
  return `${logKey}.head`
}

/** The head of the log at `key`, `undefined` when there is none, or why it is malformed. */
export async function readHead(handle: LogHandle<any, any, any>): Promise<LogHead | string | undefined> {
  // Bytes, not text: the fs driver reads them synchronously (no thread-pool round trip on every cold open).
  const bytes = await handle.workspace.readBytes(headKey(handle.key))
  if (bytes === undefined) return undefined
  const text = utf8Decoder.decode(bytes)
  let value: Record<string, unknown>
  try {
    value = JSON.parse(text) as Record<string, unknown>
  }
  catch {
    return 'the head anchor is not valid JSON'
  }
  if (value === null || typeof value !== 'object' || value.type !== TYPE || !Number.isSafeInteger(value.lines) || (value.lines as number) < 1 || !Number.isSafeInteger(value.offset) || typeof value.lastDigest !== 'string') return 'the head anchor is malformed'
  return { lines: value.lines as number, offset: value.offset as number, lastDigest: value.lastDigest }
}

/** Writes the head of the handle's committed lines now, only while the log is still `offset` bytes long. */
export async function writeHead(handle: LogHandle<any, any, any>): Promise<boolean> {
  if (handle.lines === 0 || handle.lastDigest === null || !handle.workspace.writable) return false
  const text = `${JSON.stringify({ type: TYPE, lines: handle.lines, offset: handle.offset, lastDigest: handle.lastDigest })}\n`
  return handle.workspace.replace(headKey(handle.key), text, { ifSizeOf: { key: handle.key, size: handle.offset } })
}

const pending = new WeakSet<LogHandle<any, any, any>>()

/** After a write: writes the head within {@link HEAD_DELAY_MS} (one write for a burst of appends); a failure is only a lost anchor. */
export function scheduleHead(handle: LogHandle<any, any, any>): void {
  if (pending.has(handle)) return
  pending.add(handle)
  setTimeout(() => {
    writeHead(handle)
      .catch(() => undefined)
      .finally(() => pending.delete(handle))
  }, HEAD_DELAY_MS)
}

/**
 * Why a log of `lines` committed lines does not reach its head, or `undefined`: a head naming more
 * lines than the log has, or a line `head.lines` whose digest (`digestAtHeadLine`; `undefined`
 * when the caller does not know it) is not the head's.
 */
export function headProblem(head: LogHead, lines: number, digestAtHeadLine: string | null | undefined, key: string): string | undefined {
  if (head.lines > lines) return `the log ends at line ${lines}, but its head anchor "${headKey(key)}" names ${head.lines} lines: lines were removed from its end`
  if (digestAtHeadLine !== undefined && digestAtHeadLine !== head.lastDigest) return `line ${head.lines} is not the line the head anchor "${headKey(key)}" names (the log was cut and written again)`
  return undefined
}

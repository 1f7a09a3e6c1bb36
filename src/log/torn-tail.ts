/**
 * A crash leftover at the end of the log (a torn line without `\n`, or a multi-line write without
 * its last line) is moved aside before anything is appended, so new lines never glue onto it:
 * the tail goes to `<key>.torn-<epoch ms>` and the log is truncated to its last committed line.
 */
import { utf8Decoder, EMPTY, warn, type LogHandle } from './handle.ts'

/** Moves the uncommitted tail aside and truncates the log to its committed text, if nobody wrote since. */
export async function quarantineTail(handle: LogHandle<any, any, any>): Promise<void> {
  const { workspace, key } = handle
  const quarantine = `${key}.torn-${Date.now()}`
  const size = handle.offset + handle.tail.length
  const tail = utf8Decoder.decode(handle.tail)
  if (await workspace.truncate(key, handle.offset, { ifSize: size })) {
    await workspace.append(quarantine, tail)
    warn(handle, { code: 'MEMORY_LOG_TORN_TAIL', key, message: `the memory log "${key}" ended with ${handle.tail.length} bytes of an unfinished write (a crash mid-write); they were moved to "${quarantine}" and every complete line is kept`, details: { quarantine, bytes: handle.tail.length, line: handle.lines + 1 } })
  }
  // Either way, read again: the value is now ours truncated, or another writer changed it.
  handle.seen = undefined
  handle.tail = EMPTY
}

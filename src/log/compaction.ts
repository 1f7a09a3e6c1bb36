/**
 * Compaction and erasure: the log rewritten atomically (a new value swapped in with
 * `workspace.replace`, guarded by the size it was read at). Every event is kept; the payload
 * members of the lines of erased records are removed (each line keeps its header and
 * `payloadDigest`, so the chain verifies); a torn tail is dropped (moved aside first); version 1
 * lines are rewritten as version 3 when any record was erased (a version 1 digest covers the
 * content, so its chain is recomputed from line 1). The old checkpoint is removed before the
 * swap, so no erased content outlives it there.
 */
import { agentError } from '../errors.ts'
import { canonicalJson } from './canonical-json.ts'
import { checkpointKey, checkpointsOn } from './checkpoint.ts'
import { checkpointFailed, writeCheckpoint } from './checkpoint-schedule.ts'
import { lineHasher } from './digest.ts'
import { headKey, writeHead } from './head.ts'
import { EMPTY, MAX_WRITE_ATTEMPTS, requireWritable, reset, utf8Decoder, type LogHandle } from './handle.ts'
import { payloadOf } from './line-check.ts'
import { serializeEvent } from './line-writer.ts'
import { sync } from './replay.ts'
import { quarantineTail } from './torn-tail.ts'
import type { LogEvent, LogEventDraft, LogEventSchema, MemoryLogCompaction } from './types.ts'

/**
 * Rewrites the handle's log (see the module comment).
 *
 * @throws AgentError `MEMORY_LOG_CORRUPT` when the log does not verify (nothing is rewritten);
 * `MEMORY_WORKSPACE_READ_ONLY`; `MEMORY_LOG_BUSY` when other writers kept appending; write errors of the workspace.
 */
export async function compactHandle<State, Draft extends LogEventDraft>(handle: LogHandle<State, Draft, any>): Promise<MemoryLogCompaction> {
  requireWritable(handle)
  const { workspace, key, fold } = handle
  return workspace.withLock(handle.lockKey, async () => {
    const hash = await lineHasher()
    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      await sync(handle, true)
      if (handle.tail.length > 0) {
        await quarantineTail(handle)
        continue
      }
      const bytesBefore = handle.offset
      const bytes = (await workspace.readBytes(key, 0)) ?? EMPTY
      if (bytes.length !== bytesBefore) continue
      // Erase events kept for partitions not loaded count: their records' lines are stripped too.
      const isErased = (id: string) => fold.isErased(handle.state, id) || handle.deferredErases.has(id)
      const source = utf8Decoder.decode(bytes).split('\n').slice(0, -1)
      const events = source.map(text => JSON.parse(text) as LogEvent<Draft> & Record<string, unknown>)
      const rechain = handle.hasV1 && events.some(event => isErased(event.recordId))
      const lines: string[] = []
      let erasedLines = 0
      let prev: string | null = null
      for (const [index, event] of events.entries()) {
        const strip = isErased(event.recordId) && event.type !== fold.schema.eraseType && !event.erased
        if (rechain) {
          // Version 1 digests cover the payload: rebuild the chain as version 3 from line 1.
          const { v: _v, seq: _seq, prev: _prev, digest: _digest, more, payloadDigest: _payloadDigest, erased: wasErased, ...draft } = event
          const rebuilt: { line: string; digest: string } = await serializeEvent(fold.schema, draft as unknown as Draft, index + 1, prev, more === true, hash)
          const value = JSON.parse(rebuilt.line) as Record<string, unknown>
          if (strip || wasErased) stripPayload(fold.schema, value, await payloadDigestOf(fold.schema, value, hash))
          if (strip) erasedLines++
          lines.push(canonicalJson(value))
          prev = rebuilt.digest
          continue
        }
        if (strip) {
          const value = { ...event } as Record<string, unknown>
          stripPayload(fold.schema, value, await payloadDigestOf(fold.schema, value, hash))
          lines.push(canonicalJson(value))
          erasedLines++
        }
        else lines.push(source[index]!)
      }
      const text = lines.length > 0 ? `${lines.join('\n')}\n` : ''
      // The old checkpoint goes first: it may hold records erased since, and a crash between the
      // swap and the new checkpoint must not leave their content in storage.
      if (checkpointsOn(handle)) await workspace.remove(checkpointKey(key))
      // Re-chained lines get new digests: the old head would name a digest no line has.
      if (rechain) await workspace.remove(headKey(key))
      if (!(await workspace.replace(key, text, { ifSize: bytesBefore, ...(handle.options.fsync ? { fsync: true } : {}) }))) continue
      reset(handle)
      await sync(handle, true, false)
      await writeHead(handle)
      const result = { lines: handle.lines, bytesBefore, bytesAfter: handle.offset, erasedLines, rechained: rechain }
      try {
        await writeCheckpoint(handle)
      }
      catch (error) {
        checkpointFailed(handle, error)
      }
      return result
    }
    throw agentError('MEMORY_LOG_BUSY', `other writers kept appending to the memory log "${key}" while it was compacted`, 'retry the compaction later', { key })
  })
}

/**
 * Removes the payload members of a line's value and marks it `erased` (header and digests stay,
 * so the chain verifies). A version 3 line gets its `payloadDigest` written (`payloadDigest`:
 * of its payload as the line holds it, {@link payloadDigestOf}), since no payload is left to compute it from.
 *
 * @throws TypeError when a version 3 line has no `payloadDigest` and none is given.
 */
export function stripPayload(schema: LogEventSchema, value: Record<string, unknown>, payloadDigest?: string): void {
  if (value.v === 3 && value.payloadDigest === undefined) {
    if (payloadDigest === undefined) throw new TypeError('stripPayload needs the payload digest of a version 3 line')
    value.payloadDigest = payloadDigest
  }
  for (const field of schema.payloadFields[value.type as string] ?? []) delete value[field]
  value.erased = true
}

/** The `payloadDigest` of a line's value (its payload members as the line holds them); `undefined` unless it is a version 3 line without one. */
export function payloadDigestOf(schema: LogEventSchema, value: Record<string, unknown>, hash: (text: string) => string | Promise<string>): string | Promise<string> | undefined {
  if (value.v !== 3 || value.payloadDigest !== undefined) return undefined
  return hash(canonicalJson(payloadOf(schema, value)))
}

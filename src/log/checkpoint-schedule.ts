/**
 * When checkpoints are written: after a write or a read once the log has grown past the last one
 * by `checkpointEvery` lines and by {@link CHECKPOINT_GROWTH} of the lines it covers (so its cost
 * per appended line stays constant), after a large index was built, and on request. Scheduled
 * checkpoints run after the current turn of the event loop, under the log's lock, and never fail
 * the operation that scheduled them (a failure is a `MEMORY_LOG_CHECKPOINT_FAILED` warning).
 */
import { checkpointKey, checkpointsOn, storeCheckpoint } from './checkpoint.ts'
import { boundNeedsCheckpoint, evictPartitions } from './eviction.ts'
import { warn, type LogHandle } from './handle.ts'
import { preparePartitions, sync } from './replay.ts'
import { CHECKPOINT_GROWTH, DEFAULT_CHECKPOINT_EVERY } from './types.ts'

/** Whether the log grew enough past the last checkpoint for the next one. */
function checkpointDue(handle: LogHandle<any, any, any>, every: number): boolean {
  return handle.lines - handle.checkpointLines >= Math.max(every, Math.floor(handle.checkpointLines * CHECKPOINT_GROWTH))
}

/**
 * After a write or a read of new lines: when a checkpoint is due (or `always`, after a large
 * index was built, or the bound on loaded partitions needs one, `boundNeedsCheckpoint`) and the
 * workspace is writable, writes one once the current event-loop turn is done.
 */
export function scheduleCheckpoint(handle: LogHandle<any, any, any>, always = false): void {
  const every = handle.options.checkpointEvery ?? DEFAULT_CHECKPOINT_EVERY
  if (every === false || !checkpointsOn(handle) || handle.checkpointScheduled || (!always && !checkpointDue(handle, every) && !boundNeedsCheckpoint(handle)) || !handle.workspace.writable) return
  handle.checkpointScheduled = true
  handle.checkpointRun = new Promise<void>(done => {
    setImmediate(() => {
      handle.workspace.withLock(handle.lockKey, () => writeCheckpoint(handle, always ? undefined : every, always))
        .catch(error => checkpointFailed(handle, error))
        .finally(() => {
          handle.checkpointScheduled = false
          done()
        })
    })
  })
}

/** Reports a checkpoint that could not be written (the log is unaffected). */
export function checkpointFailed(handle: LogHandle<any, any, any>, error: unknown): void {
  const checkpoint = checkpointKey(handle.key)
  const reason = error instanceof Error ? error.message : String(error)
  warn(handle, { code: 'MEMORY_LOG_CHECKPOINT_FAILED', key: handle.key, message: `the checkpoint "${checkpoint}" of the memory log "${handle.key}" could not be written (${reason}); the log is unaffected and the next cold open replays more of it`, details: { checkpoint, reason } })
}

/**
 * Takes in new lines and writes a checkpoint (call under the log's lock). `every`: only when one
 * is still due (another checkpoint may have made it unnecessary); `forIndexes`: only when an index
 * was built since the last one.
 */
export async function writeCheckpoint(handle: LogHandle<any, any, any>, every?: number, forIndexes = false): Promise<boolean> {
  if (!checkpointsOn(handle) || !handle.workspace.writable) return false
  await sync(handle, true)
  if (every !== undefined && !checkpointDue(handle, every) && !boundNeedsCheckpoint(handle)) return false
  if (forIndexes && handle.checkpointIndexes === handle.indexesBuilt) return false
  // The partitions with events kept since the last checkpoint: their new sections must hold them.
  if (handle.deferred.size > 0) await preparePartitions(handle, [...handle.deferred.keys()], true)
  const written = await storeCheckpoint(handle)
  // The partitions the checkpoint now holds exactly can be dropped from memory.
  if (written) evictPartitions(handle)
  return written
}

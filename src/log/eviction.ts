/**
 * The bound on loaded partitions ({@link MemoryLogOptions.maxLoadedPartitions}): the handle
 * stamps each partition an operation uses with the next tick of its use clock (a burst of writes
 * over many partitions updates one number per write, no map entry moves), and after an operation that leaves
 * more loaded than the bound, drops the least recently used ones its fold can reload exactly
 * from the checkpoint ({@link LogPartitions.evict}). A dropped partition is missing again, so the
 * next read or write naming it loads its section through the same path as a first load.
 */
import type { LogHandle } from './handle.ts'

/** Marks `keys` as just used: each gets the next tick of the handle's use clock. Cheap: one map write per key (in place for a key seen before). */
export function touchPartitions(handle: LogHandle<any, any, any>, keys: readonly string[] | undefined): void {
  if (handle.options.maxLoadedPartitions === undefined || !keys) return
  for (let at = 0; at < keys.length; at++) handle.used.set(keys[at]!, ++handle.useClock)
}

/**
 * Whether more partitions are loaded than the bound allows while none can be dropped because this
 * handle never loaded nor wrote a checkpoint (a full replay, or a log written from empty without
 * one yet): a partition is dropped only when a checkpoint section holds it exactly, so one
 * checkpoint is due (checkpoint-schedule.ts), after which the bound holds. Without checkpoints
 * (`checkpointEvery: false`) or on a read-only workspace it cannot hold (nothing to reload from).
 */
export function boundNeedsCheckpoint(handle: LogHandle<any, any, any>): boolean {
  const max = handle.options.maxLoadedPartitions
  if (max === undefined || handle.checkpointLines > 0) return false
  return (handle.fold.partitions?.loaded?.(handle.state).size ?? 0) > max
}

/**
 * Drops least recently used clean partitions until at most `maxLoadedPartitions` are loaded
 * (call under the log's lock, after the operation's read or write is done). Partitions loaded
 * without an operation naming them (the lines after a checkpoint, another writer's lines) count
 * as used before every named one. Returns how many were dropped.
 */
export function evictPartitions(handle: LogHandle<any, any, any>): number {
  const max = handle.options.maxLoadedPartitions
  const partitions = handle.fold.partitions
  if (max === undefined || !partitions?.loaded || !partitions.evict) return 0
  const loaded = partitions.loaded(handle.state)
  // Keys of partitions no longer loaded (or never loaded: an empty scope read) are forgotten,
  // once they could outnumber the loaded ones (so an operation under the bound costs no scan).
  if (handle.used.size > loaded.size + max) for (const key of handle.used.keys()) if (!loaded.has(key)) handle.used.delete(key)
  if (loaded.size <= max) return 0
  const unnamed = [...loaded.keys()].filter(key => !handle.used.has(key))
  // Least recently used first: by the tick each was last used at.
  const named = [...handle.used].sort((a, b) => a[1] - b[1]).map(([key]) => key)
  let dropped = 0
  for (const key of [...unnamed, ...named]) {
    if (loaded.size <= max) break
    if (!partitions.evict(handle.state, key)) continue
    handle.used.delete(key)
    dropped++
    for (const listener of handle.dropListeners) listener(key)
  }
  return dropped
}

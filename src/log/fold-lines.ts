/**
 * Folding the events of checked, committed lines into an open log's state, and the events of
 * partitions not loaded yet: a line after the checkpoint whose partition's section is not loaded
 * is checked and chained like every line, but its event is kept aside with its partition's others
 * (in log order) and folded only when that partition loads (`loadPartitions` in checkpoint.ts), so
 * a tail spread over many scopes costs no section read until a scope is used.
 */
import type { LogHandle } from './handle.ts'
import { CorruptLine } from './line-check.ts'
import type { FoldedLine, LogEventDraft } from './types.ts'

/**
 * Folds `committed` (events of complete, committed lines, in log order) into the handle's state;
 * returns how many failed to apply and were skipped (only with `readPastCorruption`; otherwise the
 * first one throws). Records whose erase event is among them are never folded (their content does
 * not enter memory). Events of a partition whose checkpoint section is not loaded are kept for it
 * ({@link LogHandle.deferred}) instead, unless the log reads past corruption (then the caller loaded
 * those sections first).
 *
 * @throws CorruptLine at the first event that does not apply.
 */
export function foldLines<State, Draft extends LogEventDraft>(handle: LogHandle<State, Draft, any>, committed: ReadonlyArray<FoldedLine<Draft>>): number {
  const { fold, state } = handle
  const eraseType = fold.schema.eraseType
  const partitions = fold.partitions
  // Asked of the partitions these events name only: the cost follows the lines read, not the sections not loaded.
  const named = partitions && !handle.options.readPastCorruption && committed.length > 0 ? [...new Set(committed.map(({ event }) => partitions.of(event)))] : []
  const unloaded = named.length > 0 ? partitions!.missing(state, named) : []
  const kept = unloaded.length > 0 ? new Set(unloaded) : undefined
  const doomed = new Set<string>()
  // Erase events kept for their partition: that partition marks their records erased when it loads.
  const doomedLater = new Set<string>()
  for (const { event } of committed) {
    if (event.type !== eraseType) continue
    doomed.add(event.recordId)
    if (kept?.has(partitions!.of(event))) doomedLater.add(event.recordId)
  }
  for (const { event, line } of committed) {
    if (event.v === 1) handle.hasV1 = true
    if (event.erased && !doomed.has(event.recordId) && !fold.isErased(state, event.recordId) && !handle.deferredErases.has(event.recordId)) {
      throw new CorruptLine(line, `the payload of the line was removed, but record "${event.recordId}" has no erase event`)
    }
  }
  // Records erased later in this read are never folded; events that name them stay valid.
  for (const id of doomed) if (!doomedLater.has(id) && !fold.has(state, id)) fold.markErased(state, id)
  let skipped = 0
  for (const item of committed) {
    const { event, line } = item
    if (doomed.has(event.recordId) && event.type !== eraseType) continue
    // An erased line was folded before it lost its payload; an erase event's own (stripped too) still erases.
    if (event.erased && event.type !== eraseType) continue
    if (kept) {
      const key = partitions!.of(event)
      if (kept.has(key)) {
        keepForPartition(handle, key, item)
        continue
      }
    }
    try {
      if (event.type === eraseType) fold.replayErase(state, event)
      else fold.apply(state, event, false)
    }
    catch (error) {
      if (!handle.options.readPastCorruption) throw new CorruptLine(line, (error as Error).message)
      skipped++
    }
  }
  return skipped
}

/** Keeps `item` for partition `key` until it loads; an erase drops the record's earlier kept events (its content leaves memory at once). */
function keepForPartition<Draft extends LogEventDraft>(handle: LogHandle<any, Draft, any>, key: string, item: FoldedLine<Draft>): void {
  let items = handle.deferred.get(key)
  if (!items) handle.deferred.set(key, items = [])
  if (item.event.type === handle.fold.schema.eraseType) {
    handle.deferredErases.add(item.event.recordId)
    const id = item.event.recordId
    const others = items.filter(other => other.event.recordId !== id || other.event.type === item.event.type)
    if (others.length !== items.length) handle.deferred.set(key, items = others)
  }
  items.push(item)
  handle.fold.partitions!.deferred?.(handle.state, item.event)
}

/**
 * Folds the events kept for the partitions `keys`, which just loaded (call right after their
 * sections are in the state), in log order per partition.
 *
 * @throws CorruptLine at the first event that does not apply to its partition.
 */
export function foldKept(handle: LogHandle<any, any, any>, keys: readonly string[]): void {
  const eraseType = handle.fold.schema.eraseType
  for (const key of keys) {
    const items = handle.deferred.get(key)
    if (!items) continue
    handle.deferred.delete(key)
    for (const { event } of items) if (event.type === eraseType) handle.deferredErases.delete(event.recordId)
    handle.skipped += foldLines(handle, items)
  }
}

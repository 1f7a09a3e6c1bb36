/**
 * Turns of the event loop given back by long synchronous work: a checkpoint of a large state, a
 * burst of awaited appends whose writes complete in the same turn (the fs workspace appends
 * synchronously under its lease, so `for (...) await append(...)` runs in microtasks only and no
 * timer, I/O callback or HTTP request would run until it ends).
 */

/** Longest run of work between two turns of the event loop, in ms (timers and I/O wait at most about this long). */
export const TURN_MS = 10

/** A clock of work since the last turn given: see {@link turns}. */
export interface Turns {
  /** Whether {@link TURN_MS} (or the clock's own interval) of work ran since the last turn given. */
  due(): boolean
  /** Gives the event loop a turn when one is {@link Turns.due}; resolves at once (in a microtask) otherwise. */
  maybe(): Promise<void>
  /** Gives the event loop a turn now (`setImmediate`, or `setTimeout(0)` where there is none) and restarts the clock. */
  take(): Promise<void>
  /** `value` itself, or after a turn when one is {@link Turns.due}: what a write resolves with (`.then(turns.pace)`). */
  pace<T>(value: T): T | Promise<T>
}

/**
 * A clock that gives the event loop a turn once `ms` (default {@link TURN_MS}) of work ran since
 * the last turn it gave, so that long work in slices does not stall the process: reads, timers
 * (`setInterval` health checks, lease renewals) and requests run between the slices. A turn taken
 * by `setImmediate` lets the timers phase run before the next slice.
 */
export function turns(ms = TURN_MS): Turns {
  let since = Date.now()
  const clock: Turns = {
    due: () => Date.now() - since >= ms,
    maybe: () => (clock.due() ? clock.take() : Promise.resolve()),
    async take() {
      await new Promise(resolve => (typeof setImmediate === 'function' ? setImmediate(resolve) : setTimeout(resolve, 0)))
      since = Date.now()
    },
    pace: value => (clock.due() ? clock.take().then(() => value) : value),
  }
  return clock
}

/**
 * The process's clock for writes: one for every log and store of the process (the JSONL log's
 * appends, the SQL stores' writes), since they share its event loop (a burst spread over many
 * logs or stores stalls it as one burst does).
 */
export const writeTurns: Turns = turns()

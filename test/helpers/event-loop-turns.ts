import { expect } from 'vitest'

/**
 * Runs `burst` (an awaited loop of writes) with a 1 ms interval and a 0 ms timeout pending, and
 * asserts the loop gave the event loop turns while it went on: the timeout ran and the interval
 * ticked at least once per 100 ms of the burst. Returns the burst's wall time in ms.
 */
export async function expectTurnsDuring(burst: () => Promise<void>): Promise<number> {
  let ticks = 0
  let timeoutRan = false
  const interval = setInterval(() => ticks++, 1)
  setTimeout(() => (timeoutRan = true), 0)
  const started = Date.now()
  let ticksAtEnd: number
  let timeoutRanAtEnd: boolean
  try {
    await burst()
  }
  finally {
    // Read before anything else awaits: only turns the loop itself gave count.
    ticksAtEnd = ticks
    timeoutRanAtEnd = timeoutRan
    clearInterval(interval)
  }
  const elapsed = Date.now() - started
  expect(elapsed).toBeGreaterThan(20)
  expect(timeoutRanAtEnd).toBe(true)
  // At most one turn per 10 ms of work is given, so at least one tick per few tens of ms ran.
  expect(ticksAtEnd).toBeGreaterThanOrEqual(Math.floor(elapsed / 100))
  expect(ticksAtEnd).toBeGreaterThan(0)
  return elapsed
}

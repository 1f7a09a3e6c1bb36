/** `BENCH_CLOCK=cpu`: time by the process's CPU time (user + system) instead of the wall clock, so that waits for other processes on a loaded machine are not counted. */
export const cpuClock = process.env.BENCH_CLOCK === 'cpu'

/** Milliseconds `fn` takes, by the clock {@link cpuClock} chooses. */
export function time(fn: () => void): number {
  if (cpuClock) {
    const start = process.cpuUsage()
    fn()
    const used = process.cpuUsage(start)
    return (used.user + used.system) / 1000
  }
  const start = performance.now()
  fn()
  return performance.now() - start
}

/**
 * The vacuum after an erasure in the Postgres store: the replaced row versions of
 * `memory_events` and `memory_records` hold the erased text until a vacuum removes them, and a
 * vacuum cannot remove a version that a transaction still open in the same database may see
 * (PostgreSQL, "Routine Vacuuming": dead tuples not yet removable). The vacuum is repeated until
 * its report counts no such version, or the wait runs out.
 */
import { agentError } from '../../../errors.ts'

/** The vacuum's connection: a query and the `notice` event of a `pg` client. */
export interface VacuumClient {
  query(text: string): Promise<unknown>
  on?(event: 'notice', listener: (notice: { message?: string }) => void): unknown
  removeListener?(event: 'notice', listener: (notice: { message?: string }) => void): unknown
}

/** Default of `erasureWaitMs`: how long an erasure waits for older transactions to end (ms). */
export const ERASURE_WAIT_MS = 10_000

// VACUUM VERBOSE's report per table: "tuples: 1 removed, 3 remain, 2 are dead but not yet removable".
const NOT_REMOVABLE = /(\d+) are dead but not yet removable/g

/** Versions a `VACUUM (VERBOSE)` report says it could not remove yet; `undefined` when no report was read (another `lc_messages`, a client without notices). */
export function versionsNotRemovable(reports: readonly string[]): number | undefined {
  let found: number | undefined
  for (const report of reports) {
    for (const match of report.matchAll(NOT_REMOVABLE)) found = (found ?? 0) + Number(match[1])
  }
  return found
}

/**
 * Vacuums the two tables until no dead version is left, waiting 50 ms, then twice as long each
 * time (at most 1 s), for transactions older than the erasure to end.
 *
 * @throws AgentError `MEMORY_POSTGRES_ERASURE_PENDING` when versions are still held after
 * `waitMs`: the erasure is committed (no row holds the text), old versions on disk still do.
 */
export async function vacuumErasedVersions(client: VacuumClient, waitMs: number): Promise<void> {
  const reports: string[] = []
  const listener = (notice: { message?: string }) => { if (notice.message) reports.push(notice.message) }
  const listens = typeof client.on === 'function' && typeof client.removeListener === 'function'
  if (listens) client.on!('notice', listener)
  try {
    const deadline = Date.now() + waitMs
    for (let pause = 50; ; pause = Math.min(pause * 2, 1000)) {
      reports.length = 0
      await client.query(listens ? 'VACUUM (VERBOSE) memory_events, memory_records' : 'VACUUM memory_events, memory_records')
      const held = versionsNotRemovable(reports)
      if (!held) return
      if (Date.now() + pause > deadline) {
        throw agentError(
          'MEMORY_POSTGRES_ERASURE_PENDING',
          `the erasure is committed, but ${held} old row version(s) in memory_events / memory_records may still hold the erased text: a transaction older than the erasure is still open in this database`,
          'end long-running transactions (see pg_stat_activity: state "idle in transaction", old xact_start), then run VACUUM memory_events, memory_records; or raise the store\'s erasureWaitMs',
          { versions: held, waitedMs: waitMs },
        )
      }
      await new Promise(resolve => setTimeout(resolve, pause))
    }
  }
  finally {
    if (listens) client.removeListener!('notice', listener)
  }
}

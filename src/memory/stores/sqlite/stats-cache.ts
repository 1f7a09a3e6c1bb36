/**
 * One connection's cache of scope statistics (what BM25F needs of a scope: `SqlPartitionStats`).
 * The database sums them from an index on each ask (a cost that grows with the scope); the cache
 * keeps them while no other connection has committed (SQLite's `PRAGMA data_version`, which this
 * connection's own commits leave unchanged) and adds this connection's own writes when they
 * commit. Bounded: at most {@link ScopeStatsCache.MAX} scopes, the oldest entry leaves first.
 */
import { addStats, type SqlPartitionStats } from '../sql/core.ts'

export class ScopeStatsCache {
  static readonly MAX = 10_000
  private version: number | undefined
  private readonly stats = new Map<string, SqlPartitionStats>()
  private pending: Array<[string, SqlPartitionStats]> = []

  /** `dataVersion`: the connection's `PRAGMA data_version`. */
  constructor(private readonly dataVersion: () => number) {}

  /** The scope's statistics: cached while valid, else `compute()` (and cached). */
  get(partition: string, compute: () => SqlPartitionStats): SqlPartitionStats {
    const version = this.dataVersion()
    if (version !== this.version) {
      this.stats.clear()
      this.version = version
    }
    let stats = this.stats.get(partition)
    if (!stats) {
      stats = compute()
      if (this.stats.size >= ScopeStatsCache.MAX) this.stats.delete(this.stats.keys().next().value!)
      this.stats.set(partition, stats)
    }
    return stats
  }

  /** What a write of this connection changes, applied once it commits. */
  add(partition: string, delta: SqlPartitionStats): void {
    this.pending.push([partition, delta])
  }

  /** The write committed: its changes join the cached statistics. */
  committed(): void {
    if (this.pending.length === 0) return
    for (const [partition, delta] of this.pending) {
      const stats = this.stats.get(partition)
      if (stats) this.stats.set(partition, addStats(stats, delta))
    }
    this.pending = []
  }

  /** Forgets every scope (a write that does not report its changes, such as an import). */
  clear(): void {
    this.stats.clear()
  }

  /** The write rolled back: its changes are dropped. */
  rolledBack(): void {
    if (this.pending.length > 0) this.pending = []
  }
}

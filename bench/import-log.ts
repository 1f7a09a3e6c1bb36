/**
 * A memory log built as the stores build it, for benches that seed stores by importing one log:
 * one `remember` line per record (kind `semantic`, created a second apart from 2024-01-01), chained.
 */
import { sha256HexSync } from '../src/log/digest.ts'
import { formatMemoryLine } from '../src/memory/event-log.ts'
import { currentInstant, newRecordId, type MemoryEventDraft } from '../src/memory/records.ts'
import type { MemoryTarget } from '../src/memory/types.ts'

/** The text of a JSONL log of `count` records: record `i` has `content(i)` in `target(i)`. */
export async function rememberLog(count: number, target: (i: number) => MemoryTarget, content: (i: number) => string): Promise<string> {
  const hash = (await sha256HexSync())!
  let prev: string | null = null
  const lines: string[] = []
  const at = currentInstant()
  for (let i = 0; i < count; i++) {
    const { store, scope } = target(i)
    const draft: MemoryEventDraft = { type: 'remember', recordId: newRecordId(), store, scope, version: 1, at, audit: { via: 'import' }, kind: 'semantic', content: content(i), tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: new Date(Date.UTC(2024, 0, 1) + i * 1000).toISOString() }
    const line = formatMemoryLine(draft, i + 1, prev, false, hash)
    prev = line.digest
    lines.push(line.line)
  }
  return `${lines.join('\n')}\n`
}

/**
 * Erasure of every copy: after records are erased
 * from a memory log (its compaction removes their payload, and the checkpoint is rewritten), their
 * text may still sit in other values of the workspace. {@link eraseCopies} finds and rewrites them:
 *
 * - approval files (`agents/<agent>/approvals/<id>.json`): the stored input and reason, sealed
 *   again; a pending approval whose input held erased text is denied (it would write it again);
 * - thread transcripts (`agents/<agent>/threads/<id>.json`): every message part (tool calls,
 *   tool results, text);
 * - conversation history (`history/*.jsonl`): entries and summaries, line by line, in the
 *   workspace and in the history stores kept outside it (in-memory and SQLite), reported as
 *   `history-store:<key>`;
 * - the log's torn leftovers (`<log>.torn-*`), crash leftovers (`*.tmp`) and a checkpoint that
 *   still holds the text (safe to remove: rebuilt by the next write): removed.
 *
 * Erased text is replaced by `[erased]`. Only the records' `content` and `title` of at least
 * {@link MIN_ERASED_CHARS} characters are searched (shorter text would match unrelated words);
 * paraphrases (a summary in other words) cannot be found. Values that are not the host's (another
 * store's log, files of your own) are never changed: those still holding the text are reported in
 * `remaining`. See docs/security.md.
 */
import { rewriteApprovalFile, decideApproval, loadApproval } from '../agent/store.ts'
import type { ApprovalRequest } from '../agent/types.ts'
import { forgetHistoryCache } from '../history/store.ts'
import { historyBackendsOutsideWorkspaces, type ScrubbableHistoryBackend } from '../history/stores.ts'
import { INTEGRITY_KEY_PATH } from '../agent/integrity.ts'
import { holdsAny, noteErased, scrubJson, scrubString } from '../workspace/erased.ts'
import type { Workspace } from '../workspace/types.ts'
import type { MemoryRecord } from './types.ts'

/** Shortest erased text (code points, trimmed) searched for in other copies. */
export const MIN_ERASED_CHARS = 4

/** Reason of the decision of a pending approval denied because its input was erased. */
export const ERASED_APPROVAL_REASON = 'its input held text that was erased from memory'

/** What {@link eraseCopies} did outside the memory log. */
export interface MemoryErasureCopies {
  /** Values rewritten with the erased text replaced by `[erased]`: workspace key and how many occurrences. */
  scrubbed: Array<{ key: string; occurrences: number }>
  /** Values removed: torn and crash leftovers, and a checkpoint still holding erased text. */
  removed: string[]
  /** Ids of pending approvals denied because their input held erased text. */
  denied: string[]
  /** Values still holding erased text that are not the host's (other logs, your own files): not changed. */
  remaining: string[]
}

/** The texts of `records` that erasure searches for in other copies: content and title, trimmed, at least {@link MIN_ERASED_CHARS} code points. */
export function erasedTexts(records: readonly Pick<MemoryRecord, 'content' | 'title'>[]): string[] {
  const texts = new Set<string>()
  for (const record of records) {
    for (const text of [record.content, record.title]) {
      const trimmed = text?.trim()
      if (trimmed && Array.from(trimmed).length >= MIN_ERASED_CHARS) texts.add(trimmed)
    }
  }
  return [...texts]
}

const APPROVAL = /^agents:([^:]+):approvals:([^:]+)\.json$/
const THREAD = /^agents:([^:]+):threads:([^:]+)\.json$/

/**
 * Rewrites every copy of `texts` in `workspace` outside the memory log `logKey` (see the module
 * comment), and notes the texts so that a run of this process holding an older transcript does
 * not write them back. Reads every value of the workspace once: erasure is rare, and a copy can
 * be anywhere.
 */
export async function eraseCopies(workspace: Workspace, texts: readonly string[], options: { logKey?: string } = {}): Promise<MemoryErasureCopies> {
  const report: MemoryErasureCopies = { scrubbed: [], removed: [], denied: [], remaining: [] }
  if (texts.length === 0) return report
  noteErased(workspace, texts)
  const logKey = options.logKey
  for (const key of await workspace.keys()) {
    if (key === logKey || key === INTEGRITY_KEY_PATH || key.endsWith('.decision') || key.endsWith('.ids')) continue
    const text = await workspace.readText(key).catch(() => undefined)
    if (text === undefined || !holdsAny(text, texts)) continue
    if ((logKey !== undefined && (key.startsWith(`${logKey}.torn-`) || key === `${logKey}.checkpoint`)) || key.endsWith('.tmp')) {
      await workspace.remove(key)
      report.removed.push(key)
      continue
    }
    const approval = APPROVAL.exec(key)
    if (approval) {
      const [, agent, encodedId] = approval
      const id = decodeURIComponent(encodedId!)
      const count = await workspace.withLock(key, () => rewriteApprovalFile(workspace, key, value => scrubJson<ApprovalRequest>(value, texts)))
      if (count > 0) report.scrubbed.push({ key, occurrences: count })
      const current = await loadApproval(workspace, agent!, id).catch(() => undefined)
      if (current?.status === 'pending') {
        const outcome = await decideApproval(workspace, current, { approved: false, reason: ERASED_APPROVAL_REASON, decidedAt: new Date().toISOString() })
        if (outcome.decided) report.denied.push(id)
      }
      continue
    }
    if (THREAD.test(key)) {
      // Not under the thread's lock: the run that erases (memory_delete) holds it, and a run of
      // this process holding the transcript in memory scrubs it when it saves (noteErased above).
      const count = await rewriteJson(workspace, key, value => scrubJson(value, texts))
      if (count > 0) report.scrubbed.push({ key, occurrences: count })
      continue
    }
    if (key.startsWith('history:') && key.endsWith('.jsonl')) {
      const count = await scrubHistory(workspace, key, texts)
      if (count > 0) report.scrubbed.push({ key, occurrences: count })
      continue
    }
    report.remaining.push(key)
  }
  for (const backend of historyBackendsOutsideWorkspaces()) {
    // A store that cannot be read now (a SQLite file gone) is skipped: it holds nothing to erase that the reader could reach either.
    const keys = await backend.keys().catch(() => [] as string[])
    for (const key of keys) {
      if (!key.startsWith('history:') || !key.endsWith('.jsonl')) continue
      const count = await scrubHistory(backend, key, texts)
      if (count > 0) report.scrubbed.push({ key: `history-store:${key}`, occurrences: count })
    }
  }
  return report
}

/** Rewrites one history value line by line, atomically against appends (retried when one came in between). */
async function scrubHistory(workspace: ScrubbableHistoryBackend, key: string, texts: readonly string[]): Promise<number> {
  return workspace.withLock(`${key}.lock`, async () => {
    for (let attempt = 0; attempt < 5; attempt++) {
      const text = (await workspace.readText(key)) ?? ''
      let count = 0
      const lines = text.split('\n').map((line) => {
        if (line === '') return line
        try {
          const scrubbed = scrubJson(JSON.parse(line) as unknown, texts)
          count += scrubbed.count
          return scrubbed.count ? JSON.stringify(scrubbed.value) : line
        }
        catch {
          // A torn last line: scrubbed as text.
          const scrubbed = scrubString(line, texts)
          count += scrubbed.count
          return scrubbed.text
        }
      })
      if (count === 0) return 0
      if (await workspace.replace(key, lines.join('\n'), { ifSize: Buffer.byteLength(text, 'utf8') })) {
        forgetHistoryCache(workspace, key)
        return count
      }
    }
    return 0
  })
}

/**
 * Rewrites one JSON value with `scrub` applied. Without a lock: a run of this process holding the
 * value's lock (the run that erases) saves it scrubbed itself; see the module comment for runs of
 * other processes.
 */
async function rewriteJson(workspace: Workspace, key: string, scrub: (value: unknown) => { value: unknown; count: number }): Promise<number> {
  const value = await workspace.readJson<unknown>(key).catch(() => undefined)
  if (value === undefined) return 0
  const scrubbed = scrub(value)
  if (scrubbed.count > 0) await workspace.writeJson(key, scrubbed.value)
  return scrubbed.count
}

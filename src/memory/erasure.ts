/**
 * Erasure of every copy: after records are erased
 * from a memory log (its compaction removes their payload, and the checkpoint is rewritten), their
 * text may still sit in other values of the workspace. {@link eraseCopies} finds and rewrites the
 * ones in reach of the erasure ({@link erasureReach}):
 *
 * - approval files (`agents/<agent>/approvals/<id>.json`): the stored input and reason, sealed
 *   again, and their decision claims (`<id>.decision`): the decision's reason, sealed again; a
 *   pending approval whose input held erased text is denied (it would write it again);
 * - thread transcripts (`agents/<agent>/threads/<id>.json`): every message part (tool calls,
 *   tool results, text); the studio's run journal of a thread (`agents/<agent>/studio/threads/<id>.json`):
 *   every event;
 * - conversation history (`history/*.jsonl`): entries and summaries, line by line, in the
 *   workspace and in the history stores kept outside it (in-memory and SQLite), reported as
 *   `history-store:<key>`;
 * - the log's torn leftovers (`<log>.torn-*`), crash leftovers (`*.tmp`; of the log's checkpoint
 *   always, since its sections are compressed) and a checkpoint that still holds the text (safe
 *   to remove: rebuilt by the next write): removed.
 *
 * In reach are the values of the erased scopes' owner (the scope's `user`, within its `tenant`
 * when the scope has one) and the values linked to the erased records, whoever owns them: the
 * thread that wrote a record (the host's audit), and any value holding a record's id or the id of
 * the run that wrote it (a tool call or result of a memory tool, an approval of that run, a history
 * entry of that run). The same sentence in another owner's value with no link is that owner's own
 * words: it is left as it is and reported in `kept`. A scope without `user` is read by every user
 * of its agent, and recall leaves no link in a transcript, so its erasure reaches every value.
 *
 * Erased text is replaced by `[erased]`. Only the records' `content` and `title` of at least
 * {@link MIN_ERASED_CHARS} characters are searched (shorter text would match unrelated words);
 * paraphrases (a summary in other words) cannot be found. Values that are not the host's (another
 * store's log, files of your own) are never changed: those still holding the text are reported in
 * `remaining`. See docs/security.md.
 */
import { approvalKey, rewriteApprovalFile, rewriteDecisionClaim, decideApproval, loadApproval, threadKey } from '../agent/store.ts'
import type { IdentityRef } from '../agent/identity.ts'
import type { ApprovalRequest } from '../agent/types.ts'
import { forgetHistoryCache, historyKey, userHistoryScope } from '../history/store.ts'
import { historyBackendsOutsideWorkspaces, type ScrubbableHistoryBackend } from '../history/stores.ts'
import { INTEGRITY_KEY_PATH } from '../agent/integrity.ts'
import { checkpointKey } from '../log/checkpoint.ts'
import { holdsAny, noteErased, scrubJson, scrubString, type ErasedValue } from '../workspace/erased.ts'
import type { Workspace } from '../workspace/types.ts'
import type { MemoryRecord, MemoryScope } from './types.ts'

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
  /** Values of other owners holding the same text with no link to the erased records (their own words): not changed. */
  kept: string[]
}

/** What an erasure reaches besides the log (see the module comment): built by {@link erasureReach}. */
export interface ErasureReach {
  /** The erased text searched for ({@link erasedTexts}). */
  texts: string[]
  /** Owners of the erased scopes: the scope's `user`, with its `tenant` when the scope has one. */
  owners: IdentityRef[]
  /** Whether a scope without `user` was erased: then every value is in reach. */
  shared: boolean
  /** Ids of the erased records and of the runs that wrote them: a value holding one is linked. */
  markers: string[]
  /** Keys of the threads that wrote the records (from the host's audit, not the model's provenance). */
  threads: Set<string>
  /** The erased records' scopes (a history kept under the same scope is the owner's). */
  scopes: MemoryScope[]
}

/** The reach of erasing `records` (see the module comment). */
export function erasureReach(records: readonly Pick<MemoryRecord, 'id' | 'content' | 'title' | 'scope' | 'audit'>[]): ErasureReach {
  const owners = new Map<string, IdentityRef>()
  const markers = new Set<string>()
  const threads = new Set<string>()
  let shared = false
  for (const record of records) {
    const { user, tenant } = record.scope
    if (user === undefined) shared = true
    else owners.set(JSON.stringify([tenant ?? null, user]), { id: user, ...(tenant !== undefined ? { tenant } : {}) })
    markers.add(record.id)
    if (record.audit?.runId) markers.add(record.audit.runId)
    const agent = record.audit?.agent ?? record.scope.agent
    if (agent !== undefined && record.audit?.threadId) threads.add(threadKey(agent, record.audit.threadId))
  }
  return { texts: erasedTexts(records), owners: [...owners.values()], shared, markers: [...markers], threads, scopes: records.map(record => record.scope) }
}

/** Whether `owner` is one of the erased scopes' owners (a scope without `tenant` names the user id in any tenant). */
function ownedBy(reach: ErasureReach, owner: IdentityRef | undefined): boolean {
  return owner !== undefined && reach.owners.some(erased => erased.id === owner.id && (erased.tenant === undefined || erased.tenant === owner.tenant))
}

/** Whether erasing reaches `value`: the erased scopes' owner's, or linked to the erased records. */
export function reaches(reach: ErasureReach, value: ErasedValue & { thread?: string }): boolean {
  return reach.shared || ownedBy(reach, value.owner) || reach.threads.has(value.key) || (value.thread !== undefined && reach.threads.has(value.thread))
    || reach.markers.some(marker => value.text.includes(marker))
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

/**
 * Whether `key` is what a crash leaves of a checkpoint of the log `logKey` being written (its
 * sibling `<checkpoint key>.<pid>.<time>.tmp`, never renamed over it). Its sections are
 * compressed, so no scan of its text tells whether it holds erased records: it is always removed
 * (a checkpoint is a cache; a write in flight that loses it reports `MEMORY_LOG_CHECKPOINT_FAILED`).
 */
function isCheckpointLeftover(key: string, logKey: string): boolean {
  return key.startsWith(`${checkpointKey(logKey)}.`) && /\.\d+\.\d+\.tmp$/.test(key)
}

const APPROVAL = /^agents:([^:]+):approvals:([^:]+)\.json$/
const DECISION = /^agents:([^:]+):approvals:([^:]+)\.decision$/
const THREAD = /^agents:([^:]+):threads:([^:]+)\.json$/
/** The studio's run journal of a thread (src/server/studio-journal.ts). */
const JOURNAL = /^agents:([^:]+):studio:threads:([^:]+)\.json$/

/**
 * Rewrites every copy of the erased text in `workspace` outside the memory log `logKey` that the
 * erasure reaches (see the module comment), and notes the texts so that a run of this process
 * holding an older transcript in reach does not write them back. Reads every value of the
 * workspace once: erasure is rare, and a copy can be anywhere.
 */
export async function eraseCopies(workspace: Workspace, reach: ErasureReach, options: { logKey?: string } = {}): Promise<MemoryErasureCopies> {
  const report: MemoryErasureCopies = { scrubbed: [], removed: [], denied: [], remaining: [], kept: [] }
  const texts = reach.texts
  if (texts.length === 0) return report
  noteErased(workspace, texts, value => reaches(reach, value))
  const logKey = options.logKey
  const histories: Array<{ key: string; text: string }> = []
  const agents = new Set(reach.scopes.map(scope => scope.agent).filter(agent => agent !== undefined))
  // Threads of the owner or linked: a history kept per thread (`{ agent, thread }`) is in reach with them.
  const threadsInReach: Array<{ agent: string; threadId: string }> = []
  const threadOwners: IdentityRef[] = []
  for (const key of await workspace.keys()) {
    if (key === logKey || key === INTEGRITY_KEY_PATH || key.endsWith('.ids')) continue
    if (logKey !== undefined && isCheckpointLeftover(key, logKey)) {
      await workspace.remove(key)
      report.removed.push(key)
      continue
    }
    const text = await workspace.readText(key).catch(() => undefined)
    if (text === undefined) continue
    const thread = THREAD.exec(key)
    if (thread) {
      agents.add(thread[1]!)
      const owner = threadOwnerOf(text)
      const inReach = reaches(reach, { key, ...(owner ? { owner } : {}), text })
      if (inReach) threadsInReach.push({ agent: thread[1]!, threadId: decodeURIComponent(thread[2]!) })
      // An erased scope without a tenant names its user in every tenant: the owners' threads say which tenants.
      if (owner && ownedBy(reach, owner)) threadOwners.push(owner)
      if (!holdsAny(text, texts)) continue
      if (!inReach) {
        report.kept.push(key)
        continue
      }
      // Not under the thread's lock: the run that erases (memory_delete) holds it, and a run of
      // this process holding the transcript in memory scrubs it when it saves (noteErased above).
      const count = await rewriteJson(workspace, key, value => scrubJson(value, texts))
      if (count > 0) report.scrubbed.push({ key, occurrences: count })
      continue
    }
    if (!holdsAny(text, texts)) continue
    const journal = JOURNAL.exec(key)
    if (journal) {
      // The studio's journal of a thread: its user's, and linked to the erased records as the thread's transcript is.
      const owner = threadOwnerOf(text)
      if (!reaches(reach, { key, ...(owner ? { owner } : {}), thread: threadKey(journal[1]!, decodeURIComponent(journal[2]!)), text })) {
        report.kept.push(key)
        continue
      }
      const count = await rewriteJson(workspace, key, value => scrubJson(value, texts))
      if (count > 0) report.scrubbed.push({ key, occurrences: count })
      continue
    }
    if ((logKey !== undefined && (key.startsWith(`${logKey}.torn-`) || key === `${logKey}.checkpoint`)) || key.endsWith('.tmp')) {
      await workspace.remove(key)
      report.removed.push(key)
      continue
    }
    const claim = DECISION.exec(key)
    if (claim) {
      // An approval's decision claim: its reason may quote the text; in reach with its approval.
      const [, agent, encodedId] = claim
      const approvalText = await workspace.readText(approvalKey(agent!, decodeURIComponent(encodedId!))).catch(() => undefined) ?? ''
      if (!reaches(reach, approvalValue(key, agent!, `${approvalText}\n${text}`, parsed<Partial<ApprovalRequest>>(approvalText)))) {
        report.kept.push(key)
        continue
      }
      const count = await rewriteDecisionClaim(workspace, key, decision => scrubJson(decision, texts))
      if (count > 0) report.scrubbed.push({ key, occurrences: count })
      continue
    }
    const approval = APPROVAL.exec(key)
    if (approval) {
      const [, agent, encodedId] = approval
      const id = decodeURIComponent(encodedId!)
      if (!reaches(reach, approvalValue(key, agent!, text, parsed<Partial<ApprovalRequest>>(text)))) {
        report.kept.push(key)
        continue
      }
      const count = await workspace.withLock(key, () => rewriteApprovalFile(workspace, key, value => scrubJson<ApprovalRequest>(value, texts)))
      if (count > 0) report.scrubbed.push({ key, occurrences: count })
      const current = await loadApproval(workspace, agent!, id).catch(() => undefined)
      if (current?.status === 'pending') {
        const outcome = await decideApproval(workspace, current, { approved: false, reason: ERASED_APPROVAL_REASON, decidedAt: new Date().toISOString() })
        if (outcome.decided) report.denied.push(id)
      }
      continue
    }
    if (key.startsWith('history:') && key.endsWith('.jsonl')) {
      histories.push({ key, text })
      continue
    }
    report.remaining.push(key)
  }
  const ownHistories = await ownerHistoryKeys(reach, agents, threadsInReach, threadOwners)
  const inReach = (key: string, text: string) => ownHistories.has(key) || reaches(reach, { key, text })
  for (const { key, text } of histories) {
    if (!inReach(key, text)) {
      report.kept.push(key)
      continue
    }
    const count = await scrubHistory(workspace, key, texts)
    if (count > 0) report.scrubbed.push({ key, occurrences: count })
  }
  for (const backend of historyBackendsOutsideWorkspaces()) {
    // A store that cannot be read now (a SQLite file gone) is skipped: it holds nothing to erase that the reader could reach either.
    const keys = await backend.keys().catch(() => [] as string[])
    for (const key of keys) {
      if (!key.startsWith('history:') || !key.endsWith('.jsonl')) continue
      const text = await backend.readText(key).catch(() => undefined)
      if (text === undefined || !holdsAny(text, texts)) continue
      if (!inReach(key, text)) {
        report.kept.push(`history-store:${key}`)
        continue
      }
      const count = await scrubHistory(backend, key, texts)
      if (count > 0) report.scrubbed.push({ key: `history-store:${key}`, occurrences: count })
    }
  }
  return report
}

/** An approval's value for {@link reaches} (of its file, or of its decision claim `key`): its user, its thread and `text`. */
function approvalValue(key: string, agent: string, text: string, stored: Partial<ApprovalRequest> | undefined): ErasedValue & { thread?: string } {
  const owner = stored?.user ? { id: stored.user.id, ...(typeof stored.user.tenant === 'string' && stored.user.tenant !== '' ? { tenant: stored.user.tenant } : {}) } : undefined
  const thread = typeof stored?.threadId === 'string' ? threadKey(agent, stored.threadId) : undefined
  return { key, ...(owner ? { owner } : {}), ...(thread ? { thread } : {}), text }
}

/** A JSON value's parse, `undefined` when it is not JSON. */
function parsed<T>(text: string): T | undefined {
  try {
    return JSON.parse(text) as T
  }
  catch {
    return undefined
  }
}

/** The owner of a stored thread (`owner`, or the user id of files written before it existed). */
function threadOwnerOf(text: string): IdentityRef | undefined {
  const thread = parsed<{ owner?: IdentityRef; user?: string; tenant?: string }>(text)
  if (thread?.owner && typeof thread.owner.id === 'string') return thread.owner
  // A transcript of an older version, or a studio journal (`user` and `tenant` side by side).
  if (typeof thread?.user !== 'string') return undefined
  return { id: thread.user, ...(typeof thread.tenant === 'string' && thread.tenant !== '' ? { tenant: thread.tenant } : {}) }
}

/**
 * Keys of the histories the erased scopes' owners have: `history({ scope: 'user' })` of each
 * agent (`{ agent, user }`), a history kept under an erased scope itself, and
 * `history({ scope: 'thread' })` of each thread in reach. A history under another scope of a
 * custom scope function is in reach only by a link.
 */
async function ownerHistoryKeys(reach: ErasureReach, agents: ReadonlySet<string>, threads: ReadonlyArray<{ agent: string; threadId: string }>, threadOwners: readonly IdentityRef[]): Promise<Set<string>> {
  const scopes: MemoryScope[] = [...reach.scopes]
  for (const agent of agents) {
    // The key without a tenant too: a tenant's user wrote there before the tenant was in the key.
    for (const owner of [...reach.owners, ...threadOwners]) scopes.push(userHistoryScope(agent, owner), { agent, user: owner.id })
  }
  for (const { agent, threadId } of threads) scopes.push({ agent, thread: threadId })
  return new Set(await Promise.all(scopes.map(scope => historyKey(scope))))
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

/**
 * The studio's run journal: every run started through the agent routes (a message, an approval
 * decision, a studio action) is written into the host workspace with its events and their times,
 * so a thread can be drawn again after a reload with its text, tool steps (input, output, duration)
 * and approval decisions, and shown as a run timeline. The host transcript keeps only what the
 * model needs (a custom-run driver stores text alone); the journal keeps what a person looks at.
 *
 * One JSON value per thread: `agents:<agent>:studio:threads:<encoded thread id>.json`. The entry of
 * a run is written before the run's first event reaches the client, and every event other than a
 * text delta is written before it is passed on, so whatever a page has shown is in the journal
 * when it reloads.
 */
import { encodeKeySegment, randomId } from '../agent/ids.ts'
import { sameIdentity } from '../agent/identity.ts'
import { hostWorkspace } from '../agent/store.ts'
import { erasedSince, erasureSequence, scrubJson } from '../workspace/erased.ts'
import { startRun, type RunOutcome } from '../agent/events.ts'
import type { AgentDefinition, AgentRun, AgentRunEvent, AgentRunResult } from '../agent/types.ts'
import type { AgentIdentity } from './types.ts'

/** What started a journalled run. */
export type JournalRunKind = 'message' | 'decision' | 'action'

/** One event of a run as journalled: the run event plus `at`, ms since the run started. Consecutive text deltas are merged. */
export type JournalEvent = AgentRunEvent & { at: number }

/** One run of a thread. */
export interface JournalRun {
  /** Id of this journal entry (the run id may only be known once the run has started). */
  id: string
  runId: string
  kind: JournalRunKind
  /** The user message (`message`), or a description of the action (`action`). */
  input?: string
  /** The approval answered (`decision`). */
  approvalId?: string
  /** ISO 8601 instant the run started. */
  startedAt: string
  /** Total duration in ms, once finished. */
  durationMs?: number
  /** `running` until the `finish` event. */
  status: 'running' | AgentRunResult['status']
  events: JournalEvent[]
}

/** The journal of one thread. */
export interface ThreadJournal {
  version: 1
  agent: string
  threadId: string
  /** Id of the user who ran it. */
  user: string
  tenant?: string
  /** `'studio'` for threads that only hold studio actions (left out of the thread list). */
  origin: 'chat' | 'studio'
  /** First user message, cut to 120 characters: the thread's title in the list. */
  title: string
  createdAt: string
  updatedAt: string
  runs: JournalRun[]
}

/** A thread as the thread list shows it. */
export interface ThreadSummary {
  threadId: string
  title: string
  createdAt: string
  updatedAt: string
  runs: number
  /** Status of the newest run. */
  status: JournalRun['status']
}

/** Workspace prefix of an agent's thread journals. */
export function journalPrefix(agent: string): string {
  return `agents:${agent}:studio:threads`
}

/** Key of one thread's journal. */
export function journalKey(agent: string, threadId: string): string {
  return `${journalPrefix(agent)}:${encodeKeySegment(threadId)}.json`
}

function owns(journal: ThreadJournal, identity: AgentIdentity): boolean {
  return sameIdentity({ id: journal.user, ...(journal.tenant ? { tenant: journal.tenant } : {}) }, identity)
}

/** The journal of a thread of `identity`, or `undefined` (unknown thread and another user's thread alike). */
export async function readJournal(agent: AgentDefinition, threadId: string, identity: AgentIdentity): Promise<ThreadJournal | undefined> {
  const journal = await hostWorkspace(agent).readJson<ThreadJournal>(journalKey(agent.name, threadId))
  return journal && owns(journal, identity) ? journal : undefined
}

/** The chat threads of `identity`, newest first. */
export async function listThreads(agent: AgentDefinition, identity: AgentIdentity): Promise<ThreadSummary[]> {
  const workspace = hostWorkspace(agent)
  const keys = (await workspace.keys(journalPrefix(agent.name))).filter(key => key.endsWith('.json'))
  const journals = await Promise.all(keys.map(key => workspace.readJson<ThreadJournal>(key).catch(() => undefined)))
  return journals
    .filter((journal): journal is ThreadJournal => !!journal && journal.origin === 'chat' && owns(journal, identity))
    .sort((a, b) => b.updatedAt.localeCompare(a.updatedAt))
    .map(journal => ({ threadId: journal.threadId, title: journal.title, createdAt: journal.createdAt, updatedAt: journal.updatedAt, runs: journal.runs.length, status: journal.runs.at(-1)?.status ?? 'completed' }))
}

// Writes of one journal are chained in this process, so two runs of a thread never lose each other's events.
const chains = new Map<string, Promise<unknown>>()

function serialized<T>(key: string, task: () => Promise<T>): Promise<T> {
  const next = (chains.get(key) ?? Promise.resolve()).then(task, task)
  const settled = next.catch(() => undefined)
  chains.set(key, settled)
  void settled.then(() => { if (chains.get(key) === settled) chains.delete(key) })
  return next
}

/**
 * Journals `run` (a thread `threadId` of `identity`) and returns a run that yields the same events.
 * The journal entry exists when this resolves; the original run is consumed at once (the host's
 * run wrapper buffers for a late reader), so it is journalled to its end even when the client goes away.
 */
export async function journalRun(agent: AgentDefinition, run: AgentRun, entry: { threadId: string; identity: AgentIdentity; kind: JournalRunKind; input?: string; approvalId?: string; origin?: ThreadJournal['origin'] }): Promise<AgentRun> {
  const workspace = hostWorkspace(agent)
  const key = journalKey(agent.name, entry.threadId)
  const started = Date.now()
  const record: JournalRun = {
    id: randomId('jrun'), runId: run.runId, kind: entry.kind, startedAt: new Date(started).toISOString(), status: 'running', events: [],
    ...(entry.input !== undefined ? { input: entry.input } : {}), ...(entry.approvalId ? { approvalId: entry.approvalId } : {}),
  }
  // Text erased while this run was journalled (the run erased a record it had shown) is not written back.
  const erasureSeen = erasureSequence()
  const owner = { id: entry.identity.id, ...(entry.identity.tenant ? { tenant: entry.identity.tenant } : {}) }
  const save = () => serialized(key, async () => {
    const now = new Date().toISOString()
    // A journal that cannot be read is left as it is (never replaced by a fresh one): the write fails instead.
    const stored = await workspace.readJson<ThreadJournal>(key)
    const journal: ThreadJournal = stored ?? {
      version: 1, agent: agent.name, threadId: entry.threadId, user: entry.identity.id, ...(entry.identity.tenant ? { tenant: entry.identity.tenant } : {}),
      origin: entry.origin ?? 'chat', title: (entry.kind === 'message' ? entry.input ?? '' : '').slice(0, 120), createdAt: now, updatedAt: now, runs: [],
    }
    const index = journal.runs.findIndex(candidate => candidate.id === record.id)
    if (index >= 0) journal.runs[index] = record
    else journal.runs.push(record)
    if (!journal.title && entry.kind === 'message' && entry.input) journal.title = entry.input.slice(0, 120)
    const erased = erasedSince(workspace, erasureSeen, () => ({ key, owner, text: JSON.stringify(journal) }))
    await workspace.writeJson(key, { ...(erased.length ? scrubJson(journal, erased).value : journal), updatedAt: now })
  })
  // The run is already going: a journal that cannot be written must not cost the user the run's events.
  await save().catch(() => undefined)

  // The host's own run wrapper replays the events; `finish` (and `error`) it emits itself from the outcome.
  const ids = { runId: run.runId, threadId: entry.threadId }
  return startRun(ids, async (emit): Promise<RunOutcome> => {
    for await (const event of run) {
      const at = Date.now() - started
      const last = record.events.at(-1)
      if (event.type === 'text-delta' && last?.type === 'text-delta') last.text += event.text
      else record.events.push({ ...event, at } as JournalEvent)
      if (event.type === 'start') ids.runId = record.runId = event.runId
      if (event.type === 'finish') {
        record.status = event.status
        record.durationMs = at
      }
      // Text deltas are written with the next step; everything else before the client sees it.
      if (event.type !== 'text-delta') await save().catch(() => undefined)
      if (event.type !== 'finish' && event.type !== 'error') emit(event)
    }
    const result = await run.result
    return { status: result.status, approvals: result.approvals, ...(result.error ? { error: result.error } : {}) }
  })
}

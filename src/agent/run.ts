import type { ModelMessage, ToolResultPart } from 'ai'
import { z } from 'zod'
import { agentError, toErrorShape } from '../errors.ts'
import { loneSurrogateAt } from '../text.ts'
import { formatIssues } from './define.ts'
import { runCustomTurn } from './drivers/custom-run.ts'
import { isProviderDriver, runProvider } from './drivers/provider.ts'
import { abortedError, runModelTurn } from './drivers/model.ts'
import { startRun, type RunOutcome } from './events.ts'
import { randomId } from './ids.ts'
import { finishInvocation, resolveInvocation, type Invocation } from './invocation.ts'
import { identityOf, sameIdentity } from './identity.ts'
import { approvalKey, decideApproval, hostWorkspace, loadApproval, loadThread, saveThread, threadKey, threadOwner, type ThreadRecord } from './store.ts'
import { answeredToolCallIds, closingToolMessage, SUPERSEDED_REASON } from './transcript.ts'
import type { AgentDefinition, AgentDriver, AgentRun, ApprovalRequest, CustomRunDriver, ModelDriver, RunAgentOptions } from './types.ts'

/** An invocation's user: an `id` and free-form claims. */
export const userSchema = z.looseObject({ id: z.string().min(1), tenant: z.string().optional(), name: z.string().optional() })
const runOptionsSchema = z.strictObject({
  input: z.string().refine((text) => loneSurrogateAt(text) < 0, 'holds a lone surrogate (half of a UTF-16 pair: not valid Unicode); remove it or replace it with U+FFFD (text.toWellFormed())'),
  threadId: z.string().min(1).max(256).optional(),
  user: userSchema.optional(),
  metadata: z.record(z.string(), z.unknown()).optional(),
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, 'must be an AbortSignal').optional(),
})

/** Whether the driver is model-backed (`{ model }`). */
export function isModelDriver(driver: AgentDriver): driver is ModelDriver {
  return 'model' in driver
}

/**
 * Starts one invocation of `agent` and returns its {@link AgentRun} at once.
 *
 * At each invocation: a new `runId` (`run_` + 20 hex), the thread id (default a new `thread_` +
 * 20 hex), every capability resolved in order with a fresh {@link CapabilityContext}, tools =
 * static tools + capability tools (a duplicate name fails the run). The thread's transcript is
 * loaded from the workspace (`agents:<agent>:threads:<thread>.json`), the user message appended,
 * and the new messages stored after the turn, so a thread continues across invocations and
 * process restarts. Without an agent workspace, transcripts and approvals live in memory for the
 * life of the definition (they do not survive a restart).
 *
 * When the thread still waits for approvals, the new message answers them as denied
 * (`'superseded by a new user message'`): nothing of them runs and the model receives a denied
 * result for each call before the new message.
 *
 * Events: `start`, then `text-delta` / `tool-call` / `tool-result` / `tool-error` /
 * `approval-request` / `approval-decision` as they happen, then `error` (failed runs only) and
 * `finish`. `result` never rejects: a capability, driver or model failure, an aborted `signal` or
 * invalid options give status `'failed'` with `error` (`CAPABILITY_RESOLVE_FAILED`,
 * `TOOL_NAME_DUPLICATE`, `MODEL_ERROR`, `DRIVER_FAILED`, `RUN_ABORTED`, `RUN_OPTIONS_INVALID`).
 * A thread belongs to the user who started it: continuing it as another user (or without the
 * user) fails with `THREAD_ACCESS_DENIED` and changes nothing.
 * Status `'awaiting-approval'` lists the pending approvals; answer them with {@link resolveApproval}.
 */
export function runAgent(agent: AgentDefinition, options: RunAgentOptions): AgentRun {
  const ids = { runId: randomId('run'), threadId: options?.threadId ?? randomId('thread') }
  return startRun(ids, async (emit): Promise<RunOutcome> => {
    emit({ type: 'start', runId: ids.runId, threadId: ids.threadId, agent: agent.name })
    const parsed = runOptionsSchema.safeParse(options)
    if (!parsed.success) {
      const problems = formatIssues(parsed.error.issues)
      return failed(agentError('RUN_OPTIONS_INVALID', `the run options are invalid: ${problems.join('; ')}`, 'pass `{ input, threadId?, user?, metadata?, signal? }` with the documented types', { issues: problems }).toJSON())
    }
    if (options.signal?.aborted) return failed(abortedError())
    const store = hostWorkspace(agent)
    const invocation = await resolveInvocation({
      agent, store, emit, runId: ids.runId, threadId: ids.threadId,
      ...(options.user ? { user: options.user } : {}),
      metadata: options.metadata ?? {},
      input: options.input,
      ...(options.signal ? { signal: options.signal } : {}),
    })
    return store.withLock(threadKey(agent.name, ids.threadId), async () => {
      const stored = await loadThread(store, agent.name, ids.threadId)
      const owner = identityOf(options.user)
      // The whole identity: the same user id in another tenant is another user.
      if (stored.messages.length && !sameIdentity(threadOwner(stored), owner)) {
        // Another user's thread answers like a thread that cannot be continued, without its content.
        return failed(agentError('THREAD_ACCESS_DENIED', `thread "${ids.threadId}" belongs to another user`, 'start a new thread (omit `threadId`) or continue one of your own threads', { threadId: ids.threadId }).toJSON())
      }
      const thread: ThreadRecord = owner ? { ...stored, owner } : stored
      const superseded = await supersedePending(invocation, thread)
      const driver = agent.driver
      if (isModelDriver(driver)) {
        const answered = answeredToolCallIds(thread.messages)
        const closing = superseded.filter((approval) => !answered.has(approval.toolCallId)).map((approval) => ({ approval, output: supersededOutput(approval) }))
        const before = closing.length ? [...thread.messages, closingToolMessage(closing)] : thread.messages
        const messages: ModelMessage[] = [...before, { role: 'user', content: options.input }]
        const turn = await runModelTurn(invocation, driver, messages)
        if (turn.error) {
          if (superseded.length) await saveThread(store, { ...thread, messages: before, pendingApprovalIds: [] })
          return failed(turn.error)
        }
        const transcript = [...messages, ...turn.responseMessages]
        await saveThread(store, { ...thread, messages: transcript, pendingApprovalIds: turn.approvals.map((approval) => approval.id) })
        return finished(invocation, settled(turn.approvals), transcript.slice(before.length), transcript)
      }
      if (isProviderDriver(driver)) return runProvider(invocation, driver, thread, options.input)
      return runCustom(invocation, driver as CustomRunDriver, thread, { input: options.input })
    })
  })
}

/** A failed outcome. */
export function failed(error: NonNullable<RunOutcome['error']>): RunOutcome {
  return { status: 'failed', approvals: [], error }
}

/** `'awaiting-approval'` when approvals are pending, else `'completed'`. */
export function settled(approvals: ApprovalRequest[]): RunOutcome {
  return { status: approvals.length ? 'awaiting-approval' : 'completed', approvals }
}

/**
 * One custom-run turn on a locked thread: runs the driver, stores the user input and the text it
 * wrote in the transcript, and records the approvals it left pending.
 */
export async function runCustom(invocation: Invocation, driver: CustomRunDriver, thread: ThreadRecord, turn: { input: string | undefined; resumed?: Parameters<typeof runCustomTurn>[2]['resumed']; remainingPending?: string[] }): Promise<RunOutcome> {
  const result = await runCustomTurn(invocation, driver, { input: turn.input, messages: thread.messages, ...(turn.resumed ? { resumed: turn.resumed } : {}) })
  const added: ModelMessage[] = []
  if (turn.input !== undefined) added.push({ role: 'user', content: turn.input })
  if (result.text) added.push({ role: 'assistant', content: result.text })
  const pending = [...(turn.remainingPending ?? []), ...result.approvals.map((approval) => approval.id)]
  // Approvals persist even when the driver later failed: they were announced and can be answered.
  const transcript = [...thread.messages, ...added]
  await saveThread(invocation.store, { ...thread, messages: transcript, pendingApprovalIds: pending })
  if (result.error) return { status: 'failed', approvals: result.approvals, error: result.error }
  return finished(invocation, settled(result.approvals), added, transcript)
}

/**
 * Runs the capabilities' finish hooks for a run that did not fail, after its transcript was
 * stored; a hook that throws turns the outcome into a failure (`CAPABILITY_FINISH_FAILED`).
 */
export async function finished(invocation: Invocation, outcome: RunOutcome, messages: ModelMessage[], transcript: ModelMessage[]): Promise<RunOutcome> {
  try {
    await finishInvocation(invocation, { status: outcome.status, messages, transcript })
    return outcome
  }
  catch (error) {
    return { status: 'failed', approvals: outcome.approvals, error: toErrorShape(error) }
  }
}

function supersededOutput(approval: ApprovalRequest): ToolResultPart['output'] {
  if (approval.status === 'approved') return { type: 'execution-denied', reason: `${SUPERSEDED_REASON} before the other approvals of its step were answered; it was not run` }
  return { type: 'execution-denied', reason: approval.decision?.reason ?? SUPERSEDED_REASON }
}

/**
 * Marks every still-pending approval of the thread denied with {@link SUPERSEDED_REASON}
 * (each under its approval lock, so a concurrent resolveApproval decides it at most once) and
 * emits `approval-decision` for each. Returns every approval the thread was waiting for.
 */
async function supersedePending(invocation: Invocation, thread: ThreadRecord): Promise<ApprovalRequest[]> {
  const { store, agent } = invocation
  const closed: ApprovalRequest[] = []
  for (const id of thread.pendingApprovalIds) {
    const approval = await store.withLock(approvalKey(agent.name, id), async () => {
      // A tampered or unreadable approval is closed like a denied one: nothing of it runs.
      const current = await loadApproval(store, agent.name, id).catch(() => undefined)
      if (!current || current.status !== 'pending') return current
      // Claimed like any decision, so a resolveApproval in another process cannot also decide it.
      const outcome = await decideApproval(store, current, { approved: false, reason: SUPERSEDED_REASON, decidedAt: new Date().toISOString() })
      if (outcome.decided) invocation.emit({ type: 'approval-decision', approvalId: id, toolCallId: outcome.approval.toolCallId, approved: false, reason: SUPERSEDED_REASON })
      return outcome.approval
    })
    if (approval) closed.push(approval)
  }
  return closed
}

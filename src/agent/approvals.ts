import type { JSONValue } from '@ai-sdk/provider'
import type { ModelMessage, ToolResultPart } from 'ai'
import { z } from 'zod'
import { agentError, toErrorShape, type AgentErrorShape } from '../errors.ts'
import { formatIssues } from './define.ts'
import { runModelTurn } from './drivers/model.ts'
import { startRun, type RunOutcome } from './events.ts'
import { randomId } from './ids.ts'
import { resolveInvocation } from './invocation.ts'
import { handOverDecision } from '../mcp/approvals.ts'
import { failed, finished, isModelDriver, runCustom, settled, userSchema } from './run.ts'
import { sameIdentity } from './identity.ts'
import { approvalKey, approvalsPrefix, decideApproval, hostWorkspace, indexedApprovalIds, loadApproval, loadThread, saveThread, threadApprovalsKey, threadKey, userApprovalsKey } from './store.ts'
import { emitExecution, executeTool, toOutcome, type ToolExecution } from './tools.ts'
import { answeredToolCallIds, approvalResponsesMessage, closingToolMessage } from './transcript.ts'
import type { AgentDefinition, AgentRun, ApprovalRequest, CustomRunDriver, ListApprovalsOptions, ResolveApprovalOptions, ToolCallOutcome } from './types.ts'

const resolveOptionsSchema = z.strictObject({
  approved: z.boolean(),
  reason: z.string().max(2000).optional(),
  approver: z.string().min(1).max(256).optional(),
  threadId: z.string().min(1).max(256).optional(),
  user: userSchema.optional(),
  signal: z.custom<AbortSignal>((value) => value instanceof AbortSignal, 'must be an AbortSignal').optional(),
})

function alreadyResolved(approval: ApprovalRequest): AgentErrorShape {
  return agentError('APPROVAL_ALREADY_RESOLVED', `approval "${approval.id}" was already ${approval.status} at ${approval.decision?.decidedAt ?? 'an earlier time'}; nothing was changed or run`, 'do nothing: each approval applies once; ask the agent again for a new request', { approvalId: approval.id, status: approval.status }).toJSON()
}

function notFound(approvalId: string): AgentErrorShape {
  return agentError('APPROVAL_NOT_FOUND', `there is no approval "${approvalId}" for this agent`, 'use an id from a pending `approval-request` event or from listApprovals()', { approvalId }).toJSON()
}

/**
 * Answers an approval request and continues its thread; returns the continuing {@link AgentRun}.
 *
 * Under the workspace lock of the approval: an unknown id fails with `APPROVAL_NOT_FOUND` (as does
 * an approval of another user when `user` is given, so ids of other users cannot be probed); an
 * approval already decided fails with `APPROVAL_ALREADY_RESOLVED` and changes nothing; a `threadId`
 * other than the approval's fails with `APPROVAL_THREAD_MISMATCH`. Otherwise the decision
 * (approver, reason, decidedAt) is stored before anything runs, so a crash can never run the
 * call twice, and `approval-decision` is emitted.
 *
 * Then, model driver: a `tool` message with `tool-approval-response` parts is appended to the
 * transcript and the model continues; the SDK runs an approved call once through the pipeline
 * (stored input, `context.approval` set, fingerprint compared: a change gives `APPROVAL_CONFLICT`
 * and nothing runs) or gives the model an `execution-denied` result. When other approvals of the
 * same step are still pending, the run ends `'awaiting-approval'` until the last one is answered.
 * When a new user message already closed the call (model driver: its transcript holds a result for
 * it), the resolution fails with `APPROVAL_SUPERSEDED` and nothing runs.
 * Custom-run driver: the host runs an approved call once itself, then calls `driver.run` with
 * `input: undefined` and `resumed: { approval, outcome }`.
 * MCP bridge (`approval.via === 'mcp'`, any driver): the decision is handed to the MCP call waiting
 * for it, which runs an approved call once (in its own run); this run ends `'completed'` at once.
 *
 * The continuation is the requesting run resumed: capabilities resolve again with the run id, thread,
 * user and metadata stored on the approval. Works after a restart with a new definition over the
 * same workspace. `run.runId` and `run.threadId` are the approval's once the `start` event is out
 * (before that: a fresh id and `options.threadId` or `''`).
 */
export function resolveApproval(agent: AgentDefinition, approvalId: string, options: ResolveApprovalOptions): AgentRun {
  const ids = { runId: randomId('run'), threadId: options?.threadId ?? '' }
  return startRun(ids, async (emit): Promise<RunOutcome> => {
    const store = hostWorkspace(agent)
    const start = () => emit({ type: 'start', runId: ids.runId, threadId: ids.threadId, agent: agent.name })
    const parsed = resolveOptionsSchema.safeParse(options)
    if (typeof approvalId !== 'string' || !approvalId || !parsed.success) {
      start()
      const problems = parsed.success ? ['the approval id must be a non-empty string'] : formatIssues(parsed.error.issues)
      return failed(agentError('APPROVAL_OPTIONS_INVALID', `resolveApproval was called with invalid options: ${problems.join('; ')}`, 'pass the id of the approval request and `{ approved, reason?, approver?, threadId?, user?, signal? }`', { issues: problems }).toJSON())
    }
    const decided = await store.withLock(approvalKey(agent.name, approvalId), async (): Promise<ApprovalRequest | AgentErrorShape> => {
      let approval: ApprovalRequest | undefined
      try {
        approval = await loadApproval(store, agent.name, approvalId)
      }
      catch (error) {
        return toErrorShape(error)
      }
      if (!approval || approval.agent !== agent.name) return notFound(approvalId)
      // The whole identity (tenant and user id): a same-named user of another tenant is another user.
      if (options.user && !sameIdentity(approval.user, options.user)) return notFound(approvalId)
      if (options.threadId !== undefined && options.threadId !== approval.threadId) {
        return agentError('APPROVAL_THREAD_MISMATCH', `approval "${approvalId}" belongs to another thread than "${options.threadId}"`, 'resolve it from the thread that requested it, or omit `threadId`', { approvalId, threadId: options.threadId }).toJSON()
      }
      if (approval.status !== 'pending') return alreadyResolved(approval)
      // The claim is what makes the decision single-use across processes and instances: the
      // lock above only orders callers of this process.
      const outcome = await decideApproval(store, approval, { approved: options.approved, ...(options.reason ? { reason: options.reason } : {}), ...(options.approver ? { approver: options.approver } : {}), decidedAt: new Date().toISOString() })
      return outcome.decided ? outcome.approval : alreadyResolved(outcome.approval)
    })
    if (!('id' in decided)) {
      start()
      return failed(decided)
    }
    // The decision continues the run that asked for it: same run id, thread, user and metadata,
    // so capabilities resolve the same scopes and provenance names the requesting run.
    ids.threadId = decided.threadId
    ids.runId = decided.runId
    start()
    emit({ type: 'approval-decision', approvalId: decided.id, toolCallId: decided.toolCallId, approved: options.approved, ...(options.reason ? { reason: options.reason } : {}), ...(options.approver ? { approver: options.approver } : {}) })
    if (decided.via === 'mcp') {
      // The MCP call that asked is still open and runs (or refuses) the call itself.
      handOverDecision(decided)
      return settled([])
    }
    if (options.signal?.aborted) return failed(agentError('RUN_ABORTED', 'the run was aborted through its signal after the decision was stored', 'the decision stands; send a new message to continue the thread').toJSON())

    const user = options.user ?? decided.user
    const invocation = await resolveInvocation({
      agent, store, emit, runId: ids.runId, threadId: decided.threadId,
      ...(user ? { user } : {}),
      metadata: decided.metadata ?? {},
      ...(options.signal ? { signal: options.signal } : {}),
    })
    return store.withLock(threadKey(agent.name, decided.threadId), async () => {
      const thread = await loadThread(store, agent.name, decided.threadId)
      const pendingIds = thread.pendingApprovalIds.includes(decided.id) ? thread.pendingApprovalIds : [...thread.pendingApprovalIds, decided.id]
      const driver = agent.driver
      if (!isModelDriver(driver)) {
        const outcome = await runDecidedCall(decided, async () => {
          const execution = await executeTool(invocation, decided.toolName, decided.input, decided.toolCallId, decided)
          emitExecution(invocation, decided.toolName, decided.toolCallId, execution)
          return execution
        })
        return runCustom(invocation, driver as CustomRunDriver, thread, { input: undefined, resumed: { approval: decided, outcome }, remainingPending: pendingIds.filter((id) => id !== decided.id) })
      }

      if (answeredToolCallIds(thread.messages).has(decided.toolCallId)) {
        // A new user message closed the call (the model was told it was not run) between the
        // decision and this continuation: running it now would contradict what the model was told.
        return failed(agentError('APPROVAL_SUPERSEDED', `approval "${decided.id}" was closed by a new user message in its thread before the decision took effect; the call was not run`, 'ask the agent again if the action is still wanted', { approvalId: decided.id }).toJSON())
      }
      const step = (await Promise.all(pendingIds.map((id) => loadApproval(store, agent.name, id)))).filter((approval): approval is ApprovalRequest => approval !== undefined)
      const waiting = step.filter((approval) => approval.status === 'pending')
      if (waiting.length) {
        // The SDK needs an answer for every call of the step before the model continues.
        await saveThread(store, { ...thread, pendingApprovalIds: pendingIds })
        return settled(waiting)
      }
      const messages: ModelMessage[] = [...thread.messages, approvalResponsesMessage(step)]
      const approved = new Map(step.filter((approval) => approval.status === 'approved').map((approval) => [approval.toolCallId, approval]))
      const turn = await runModelTurn(invocation, driver, messages, approved)
      if (turn.error) {
        // Close the step so the transcript stays valid: every call gets the result it had.
        const closing = step.map((approval) => ({ approval, output: closingOutput(approval, turn.executions.get(approval.toolCallId)) }))
        await saveThread(store, { ...thread, messages: [...thread.messages, closingToolMessage(closing)], pendingApprovalIds: [] })
        return failed(turn.error)
      }
      const transcript = [...messages, ...turn.responseMessages]
      await saveThread(store, { ...thread, messages: transcript, pendingApprovalIds: turn.approvals.map((approval) => approval.id) })
      return finished(invocation, settled(turn.approvals), transcript.slice(thread.messages.length), transcript)
    })
  })
}

async function runDecidedCall(approval: ApprovalRequest, run: () => Promise<ToolExecution>): Promise<ToolCallOutcome> {
  if (approval.status !== 'approved') return { status: 'denied', toolCallId: approval.toolCallId, reason: approval.decision?.reason ?? 'denied by the user' }
  return toOutcome(approval.toolCallId, await run())
}

function closingOutput(approval: ApprovalRequest, execution: ToolExecution | undefined): ToolResultPart['output'] {
  if (approval.status !== 'approved') return { type: 'execution-denied', ...(approval.decision?.reason ? { reason: approval.decision.reason } : {}) }
  if (!execution) return { type: 'error-text', value: 'the call was approved but the run failed before it ran; it was not run' }
  return execution.ok ? { type: 'json', value: toJsonValue(execution.output) } : { type: 'error-text', value: execution.error.message }
}

function toJsonValue(value: unknown): JSONValue {
  return value === undefined ? null : JSON.parse(JSON.stringify(value))
}

/**
 * Lists the approvals persisted for `agent` (in its workspace, or in memory without one),
 * oldest first, optionally filtered by thread, identity (tenant and user id) and status.
 *
 * With `threadId` or `user`, only that thread's or identity's approvals are read (through the
 * index written when each was requested); without either, every approval file of the agent is
 * read (for the CLI and administration, not for per-request routes). A file that is not JSON or
 * fails its integrity check is left out (reading it by id with {@link resolveApproval} reports
 * why), so one bad file never hides the others.
 */
export async function listApprovals(agent: AgentDefinition, options: ListApprovalsOptions = {}): Promise<ApprovalRequest[]> {
  const store = hostWorkspace(agent)
  let ids: string[]
  if (options.threadId !== undefined) ids = await indexedApprovalIds(store, threadApprovalsKey(agent.name, options.threadId))
  else if (options.user !== undefined) ids = await indexedApprovalIds(store, userApprovalsKey(agent.name, options.user))
  else {
    const prefix = `${approvalsPrefix(agent.name)}:`
    ids = (await store.keys(approvalsPrefix(agent.name))).filter((key) => key.endsWith('.json') && key.startsWith(prefix)).map((key) => decodeURIComponent(key.slice(prefix.length, -'.json'.length)))
  }
  const approvals = await Promise.all(ids.map((id) => loadApproval(store, agent.name, id).catch(() => undefined)))
  return approvals
    .filter((approval): approval is ApprovalRequest => approval !== undefined)
    .filter((approval) => (options.threadId === undefined || approval.threadId === options.threadId)
      && (options.user === undefined || sameIdentity(approval.user, options.user))
      && (options.status === undefined || approval.status === options.status))
    .sort((a, b) => a.createdAt.localeCompare(b.createdAt))
}

import { agentError, type AgentErrorShape } from '../errors.ts'
import type { Invocation } from '../agent/invocation.ts'
import { approvalKey, decideApproval, loadApproval } from '../agent/store.ts'
import type { ApprovalRequest } from '../agent/types.ts'

/**
 * Approvals of calls that arrive over MCP. The MCP call stays open while the host decides, so the
 * bridge call that asked is the one that runs (or refuses) the call: `resolveApproval` stores the
 * decision and hands it over here, and never runs a bridge call itself.
 */

type Waiter = (approval: ApprovalRequest) => void

// In-process hand-over: resolveApproval in the same process wakes the waiting call at once.
const waiters = new Map<string, Set<Waiter>>()

function waiterKey(agent: string, approvalId: string): string {
  return `${agent}\u0000${approvalId}`
}

/** Default time a `require-approval` call over MCP waits for a decision: 300000 ms (5 minutes). */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 300_000

/** How often a waiting call re-reads its approval from the workspace (decisions made by another process), in ms. */
export const APPROVAL_POLL_MS = 200

/**
 * Called by `resolveApproval` after it stored the decision of a `via: 'mcp'` approval: wakes the
 * bridge call waiting for it in this process. A call waiting in another process (for example
 * `agent mcp` over a shared fs workspace) sees the decision when it next reads the approval.
 */
export function handOverDecision(approval: ApprovalRequest): void {
  const key = waiterKey(approval.agent, approval.id)
  for (const wake of waiters.get(key) ?? []) wake(approval)
}

/**
 * The window between a timed-out (or cancelled) call's last read of its still-pending approval
 * and its claim of the denial, where another process or app instance can decide first: the claim
 * (a conditional append) settles it. `beforeClaim`, unset in production, runs in that window;
 * test/mcp/timeout-race.test.ts sets it to hold the timeout there while another workspace
 * instance approves.
 */
export const timeoutClaimSeam: { beforeClaim?: (approval: ApprovalRequest) => Promise<void> } = {}

/** How a wait ended: decided by the host, or closed by the bridge (timeout, cancel, end of run). */
export type ApprovalWait =
  | { kind: 'decided'; approval: ApprovalRequest }
  | { kind: 'closed'; approval: ApprovalRequest; error: AgentErrorShape }

/**
 * Waits until `approval` is decided, `timeoutMs` passes or `signal` aborts. A decision made in
 * this process arrives at once, one made by another process within {@link APPROVAL_POLL_MS}.
 * On timeout or abort the approval is marked `denied` under its workspace lock (unless a decision
 * won the race, which is then used) and `approval-decision` is emitted, so a later
 * `resolveApproval` answers `APPROVAL_ALREADY_RESOLVED` and the call never runs.
 * `onWaiting` is called every `tickMs` while waiting (the bridge sends MCP progress from it).
 */
export async function awaitDecision(invocation: Invocation, approval: ApprovalRequest, options: { timeoutMs: number; signal?: AbortSignal; tickMs?: number; onWaiting?: (waitedMs: number) => void }): Promise<ApprovalWait> {
  const { store, agent } = invocation
  const key = waiterKey(agent.name, approval.id)
  const started = Date.now()
  let wake: Waiter = () => {}
  let settledApproval: ApprovalRequest | undefined
  const woken = new Promise<ApprovalRequest>((resolve) => { wake = resolve })
  let set = waiters.get(key)
  if (!set) waiters.set(key, set = new Set())
  set.add(wake)
  const aborted = new Promise<'aborted'>((resolve) => {
    if (options.signal?.aborted) resolve('aborted')
    options.signal?.addEventListener('abort', () => resolve('aborted'), { once: true })
  })
  const tickMs = options.tickMs ?? 10_000
  let lastTick = started
  try {
    while (true) {
      const waited = Date.now() - started
      if (waited >= options.timeoutMs) break
      const pause = new Promise<'poll'>((resolve) => setTimeout(resolve, Math.min(APPROVAL_POLL_MS, options.timeoutMs - waited), 'poll'))
      const next = await Promise.race([woken, aborted, pause])
      if (next === 'aborted') break
      if (next !== 'poll') {
        settledApproval = next
        break
      }
      const current = await loadApproval(store, agent.name, approval.id).catch(() => undefined)
      if (current && current.status !== 'pending') {
        settledApproval = current
        break
      }
      if (options.onWaiting && Date.now() - lastTick >= tickMs) {
        lastTick = Date.now()
        options.onWaiting(lastTick - started)
      }
    }
  }
  finally {
    set.delete(wake)
    if (set.size === 0) waiters.delete(key)
  }
  if (settledApproval) return { kind: 'decided', approval: settledApproval }

  const timedOut = !options.signal?.aborted
  const reason = timedOut
    ? `no decision within ${options.timeoutMs} ms; the call timed out and was not run`
    : 'the MCP call was cancelled (or its run ended) before a decision; it was not run'
  return store.withLock(approvalKey(agent.name, approval.id), async (): Promise<ApprovalWait> => {
    const current = await loadApproval(store, agent.name, approval.id).catch(() => undefined)
    if (current && current.status !== 'pending') return { kind: 'decided', approval: current }
    await timeoutClaimSeam.beforeClaim?.(current ?? approval)
    const outcome = await decideApproval(store, current ?? approval, { approved: false, reason, decidedAt: new Date().toISOString() })
    if (!outcome.decided) return { kind: 'decided', approval: outcome.approval }
    const closed = outcome.approval
    invocation.emit({ type: 'approval-decision', approvalId: closed.id, toolCallId: closed.toolCallId, approved: false, reason })
    const error = timedOut
      ? agentError('APPROVAL_TIMEOUT', `"${approval.toolName}" needed approval ${approval.id} and nobody decided within ${options.timeoutMs} ms, so it was not run and nothing was written`, 'tell the user the action is waiting for their approval and call the tool again when they are ready', { approvalId: approval.id, tool: approval.toolName, timeoutMs: options.timeoutMs })
      : agentError('APPROVAL_CANCELLED', `the call of "${approval.toolName}" was cancelled while approval ${approval.id} was pending, so it was not run`, 'call the tool again if the action is still wanted', { approvalId: approval.id, tool: approval.toolName })
    return { kind: 'closed', approval: closed, error: error.toJSON() }
  })
}

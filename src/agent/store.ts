import type { ModelMessage } from 'ai'
import { createStorage } from 'unstorage'
import { agentError } from '../errors.ts'
import { createWorkspace } from '../workspace/workspace.ts'
import type { Workspace } from '../workspace/types.ts'
import { erasedSince, erasureSequence, scrubJson } from '../workspace/erased.ts'
import { identityKey, identityOf, type IdentityRef } from './identity.ts'
import { encodeKeySegment } from './ids.ts'
import { seal, verifySeal, workspaceSecret } from './integrity.ts'
import type { AgentDefinition, AgentUser, ApprovalRequest } from './types.ts'

// Without a writable agent workspace, approvals and transcripts live in one in-memory workspace per
// definition: they work within the process but do not survive a restart.
const fallbackWorkspaces = new WeakMap<AgentDefinition, Workspace>()

/**
 * The workspace the host persists approvals and thread transcripts into: the agent's own when it
 * is writable, else an in-memory one created once per definition (documented as not surviving a
 * restart), so that an agent whose workspace is read-only (memory it may only read) still runs.
 */
export function hostWorkspace(agent: AgentDefinition): Workspace {
  if (agent.workspace?.writable) return agent.workspace
  let workspace = fallbackWorkspaces.get(agent)
  if (!workspace) {
    workspace = createWorkspace({ storage: createStorage() })
    fallbackWorkspaces.set(agent, workspace)
  }
  return workspace
}

/** Key of one approval: `agents:<agent>:approvals:<encoded id>.json`. */
export function approvalKey(agent: string, approvalId: string): string {
  return `agents:${agent}:approvals:${encodeKeySegment(approvalId)}.json`
}

/** Key of an approval's decision claim: `agents:<agent>:approvals:<encoded id>.decision` (written once, by the one caller that decides). */
export function decisionKey(agent: string, approvalId: string): string {
  return `agents:${agent}:approvals:${encodeKeySegment(approvalId)}.decision`
}

/** Prefix of every approval of an agent. */
export function approvalsPrefix(agent: string): string {
  return `agents:${agent}:approvals`
}

/** Key of the ids of a thread's approvals, one a line, in creation order. */
export function threadApprovalsKey(agent: string, threadId: string): string {
  return `agents:${agent}:approval-index:threads:${encodeKeySegment(threadId)}.ids`
}

/** Key of the ids of an identity's approvals (see identity.ts), one a line, in creation order. */
export function userApprovalsKey(agent: string, user: AgentUser | IdentityRef | undefined): string {
  return `agents:${agent}:approval-index:users:${encodeKeySegment(identityKey(user))}.ids`
}

/** Key of one thread transcript: `agents:<agent>:threads:<encoded thread id>.json`. */
export function threadKey(agent: string, threadId: string): string {
  return `agents:${agent}:threads:${encodeKeySegment(threadId)}.json`
}

/** A thread as persisted: its AI SDK transcript and the approvals its last step waits for. */
export interface ThreadRecord {
  version: 1
  threadId: string
  agent: string
  /** The identity (tenant and user id) that started the thread; only it (or, without one, only runs without a user) may read or continue it. */
  owner?: IdentityRef
  /** Files written before `owner` existed: the user id alone (read as an identity without a tenant). */
  user?: string
  messages: ModelMessage[]
  /** Approvals of the last step still to be answered (decided or not) before the model continues. */
  pendingApprovalIds: string[]
  updatedAt: string
  /** Not stored: the erasure sequence when the thread was read (text erased later is scrubbed from it when it is saved). */
  erasureSeen?: number
}

/** The identity that owns a thread (`undefined`: a thread of runs without a user). */
export function threadOwner(thread: ThreadRecord): IdentityRef | undefined {
  return thread.owner ?? (thread.user !== undefined ? { id: thread.user } : undefined)
}

export async function loadThread(workspace: Workspace, agent: string, threadId: string): Promise<ThreadRecord> {
  const erasureSeen = erasureSequence()
  const stored = await workspace.readJson<ThreadRecord>(threadKey(agent, threadId))
  return { ...(stored ?? { version: 1, threadId, agent, messages: [], pendingApprovalIds: [], updatedAt: new Date().toISOString() }), erasureSeen }
}

export async function saveThread(workspace: Workspace, thread: ThreadRecord): Promise<void> {
  const { user: _legacy, erasureSeen, ...kept } = thread
  // Text erased while this thread was held in memory (a run that erased a record) is not written back.
  const owner = threadOwner(thread)
  const key = threadKey(thread.agent, thread.threadId)
  const erased = erasedSince(workspace, erasureSeen ?? erasureSequence(), () => ({ key, ...(owner ? { owner } : {}), text: JSON.stringify(kept.messages) }))
  const rest = erased.length ? { ...kept, messages: scrubJson(kept.messages, erased).value } : kept
  await workspace.writeJson(key, { ...rest, ...(owner ? { owner } : {}), updatedAt: new Date().toISOString() })
}

/** An approval file as stored: the request and its seal. */
type SealedApproval = ApprovalRequest & { integrity?: string }

/** A decision claim as stored: which approval, how it was decided, and its seal. */
interface DecisionClaim {
  approvalId: string
  agent: string
  status: 'approved' | 'denied'
  decision: NonNullable<ApprovalRequest['decision']>
  integrity?: string
}

function tampered(approvalId: string, what: string): Error {
  return agentError('APPROVAL_TAMPERED', `the stored ${what} of approval "${approvalId}" fails its integrity check (it was changed or written outside the host), so it is not used`, 'nothing was run; ask the agent again for a new approval, and find out who changed the file', { approvalId })
}

/**
 * Reads an approval, checked: its file's seal, and its decision claim when one exists (the claim
 * is the decision: a file flipped back to `pending` still reads as decided).
 *
 * @throws `APPROVAL_TAMPERED` when the file or its claim fails the integrity check, or the claim
 * names another approval; `WORKSPACE_CORRUPT_JSON` for a file that is not JSON.
 */
export async function loadApproval(workspace: Workspace, agent: string, approvalId: string): Promise<ApprovalRequest | undefined> {
  const stored = await workspace.readJson<SealedApproval>(approvalKey(agent, approvalId))
  if (stored === undefined) return undefined
  const secret = await workspaceSecret(workspace)
  const { integrity, ...approval } = stored ?? {}
  if (!stored || typeof stored !== 'object' || !verifySeal(secret, approval, integrity) || approval.id !== approvalId || approval.agent !== agent) throw tampered(approvalId, 'file')
  const claimText = await workspace.readText(decisionKey(agent, approvalId))
  if (claimText === undefined || claimText === '') return approval
  let claim: DecisionClaim
  try {
    claim = JSON.parse(claimText) as DecisionClaim
  }
  catch {
    throw tampered(approvalId, 'decision')
  }
  const { integrity: claimSeal, ...claimed } = claim
  if (!verifySeal(secret, claimed, claimSeal) || claimed.approvalId !== approvalId || claimed.agent !== agent) throw tampered(approvalId, 'decision')
  return { ...approval, status: claimed.status, decision: claimed.decision }
}

/** Writes an approval file with its seal (the decision, when there is one, is claimed first with {@link decideApproval}). */
export async function saveApproval(workspace: Workspace, approval: ApprovalRequest): Promise<void> {
  const { integrity: _old, ...plain } = approval as SealedApproval
  const value = JSON.parse(JSON.stringify(plain)) as ApprovalRequest
  await workspace.writeJson(approvalKey(approval.agent, approval.id), { ...value, integrity: seal(await workspaceSecret(workspace), value) })
}

/** Persists a new approval request and adds it to its thread's and its identity's index. */
export async function createApproval(workspace: Workspace, approval: ApprovalRequest): Promise<void> {
  await saveApproval(workspace, approval)
  await workspace.append(threadApprovalsKey(approval.agent, approval.threadId), `${approval.id}\n`)
  await workspace.append(userApprovalsKey(approval.agent, identityOf(approval.user)), `${approval.id}\n`)
}

/** The approval ids of an index value (see {@link threadApprovalsKey}), each once, in creation order. */
export async function indexedApprovalIds(workspace: Workspace, key: string): Promise<string[]> {
  const text = await workspace.readText(key)
  return [...new Set((text ?? '').split('\n').filter(Boolean))]
}

/** What {@link decideApproval} answers: the caller decided it, or somebody else did first. */
export type DecisionOutcome = { decided: true; approval: ApprovalRequest } | { decided: false; approval: ApprovalRequest }

/**
 * Decides a pending approval exactly once across every process and instance that shares the
 * workspace: the decision is claimed with a conditional append of its claim value (written only
 * while the value is empty: fs under the value's cross-process lock, Redis in one Lua script,
 * memory in one synchronous step), so one caller wins; every other caller gets the winner's
 * decision back (`decided: false`) and must not run anything. Then the approval file is rewritten
 * with the decision, for readers of the file.
 *
 * Drivers without a native conditional append (see docs/workspace.md) claim under a lock of this
 * process only.
 */
export async function decideApproval(workspace: Workspace, approval: ApprovalRequest, decision: NonNullable<ApprovalRequest['decision']>): Promise<DecisionOutcome> {
  const status = decision.approved ? 'approved' : 'denied'
  const claim: Omit<DecisionClaim, 'integrity'> = JSON.parse(JSON.stringify({ approvalId: approval.id, agent: approval.agent, status, decision }))
  const text = `${JSON.stringify({ ...claim, integrity: seal(await workspaceSecret(workspace), claim) })}\n`
  const won = await workspace.append(decisionKey(approval.agent, approval.id), text, { ifSize: 0 })
  if (!won) {
    const current = await loadApproval(workspace, approval.agent, approval.id)
    return { decided: false, approval: current ?? approval }
  }
  const updated: ApprovalRequest = { ...approval, status, decision: claim.decision }
  await saveApproval(workspace, updated)
  return { decided: true, approval: updated }
}

/**
 * Rewrites an approval's decision claim (`key`, see {@link decisionKey}) with `scrub` applied to
 * its decision (erasure of text its reason holds), only while it is the value read (a conditional
 * replace: it never becomes empty, so no second decision can be claimed meanwhile). A claim whose
 * seal holds is sealed again; one that failed its check keeps its old seal and stays refused.
 * Returns how many occurrences were replaced.
 */
export async function rewriteDecisionClaim(workspace: Workspace, key: string, scrub: (decision: NonNullable<ApprovalRequest['decision']>) => { value: NonNullable<ApprovalRequest['decision']>; count: number }): Promise<number> {
  const text = await workspace.readText(key).catch(() => undefined)
  const stored = text ? parsedClaim(text) : undefined
  if (!stored) return 0
  const { integrity, ...claim } = stored
  const secret = await workspaceSecret(workspace)
  const { value, count } = scrub(claim.decision)
  if (count === 0) return 0
  const rewritten = { ...claim, decision: value }
  const resealed = verifySeal(secret, claim, integrity) ? seal(secret, rewritten) : integrity
  await workspace.replace(key, `${JSON.stringify({ ...rewritten, ...(resealed !== undefined ? { integrity: resealed } : {}) })}\n`, { ifSize: new TextEncoder().encode(text!).length })
  return count
}

function parsedClaim(text: string): DecisionClaim | undefined {
  try {
    const value = JSON.parse(text) as DecisionClaim
    return value !== null && typeof value === 'object' && value.decision !== null && typeof value.decision === 'object' ? value : undefined
  }
  catch {
    return undefined
  }
}

/**
 * Rewrites an approval file with `scrub` applied (erasure of text it holds). A file whose seal
 * holds is sealed again; one that failed its check keeps its old seal and stays refused, so a
 * forged file is never turned into a valid one. Returns how many occurrences were replaced.
 */
export async function rewriteApprovalFile(workspace: Workspace, key: string, scrub: (approval: ApprovalRequest) => { value: ApprovalRequest; count: number }): Promise<number> {
  const stored = await workspace.readJson<SealedApproval>(key).catch(() => undefined)
  if (!stored || typeof stored !== 'object') return 0
  const { integrity, ...approval } = stored
  const sealed = verifySeal(await workspaceSecret(workspace), approval, integrity)
  const { value, count } = scrub(approval)
  if (count === 0) return 0
  if (sealed) await saveApproval(workspace, value)
  else await workspace.writeJson(key, { ...value, ...(integrity !== undefined ? { integrity } : {}) })
  return count
}

import type { ModelMessage } from 'ai'
import { createStorage } from 'unstorage'
import { createWorkspace } from '../workspace/workspace.ts'
import type { Workspace } from '../workspace/types.ts'
import { encodeKeySegment } from './ids.ts'
import type { AgentDefinition, ApprovalRequest } from './types.ts'

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

/** Prefix of every approval of an agent. */
export function approvalsPrefix(agent: string): string {
  return `agents:${agent}:approvals`
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
  /** Id of the user who started the thread; only that user (or, without one, only runs without a user) may continue it. */
  user?: string
  messages: ModelMessage[]
  /** Approvals of the last step still to be answered (decided or not) before the model continues. */
  pendingApprovalIds: string[]
  updatedAt: string
}

export async function loadThread(workspace: Workspace, agent: string, threadId: string): Promise<ThreadRecord> {
  const stored = await workspace.readJson<ThreadRecord>(threadKey(agent, threadId))
  return stored ?? { version: 1, threadId, agent, messages: [], pendingApprovalIds: [], updatedAt: new Date().toISOString() }
}

export async function saveThread(workspace: Workspace, thread: ThreadRecord): Promise<void> {
  await workspace.writeJson(threadKey(thread.agent, thread.threadId), { ...thread, updatedAt: new Date().toISOString() })
}

export async function loadApproval(workspace: Workspace, agent: string, approvalId: string): Promise<ApprovalRequest | undefined> {
  return workspace.readJson<ApprovalRequest>(approvalKey(agent, approvalId))
}

export async function saveApproval(workspace: Workspace, approval: ApprovalRequest): Promise<void> {
  await workspace.writeJson(approvalKey(approval.agent, approval.id), approval)
}

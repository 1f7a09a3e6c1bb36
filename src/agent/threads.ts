import type { ModelMessage } from 'ai'
import { sameIdentity } from './identity.ts'
import { hostWorkspace, loadThread, threadKey, threadOwner } from './store.ts'
import type { AgentDefinition, AgentUser } from './types.ts'

/** A thread as {@link readThread} returns it. */
export interface ThreadView {
  threadId: string
  /** The stored transcript (AI SDK messages: user, assistant, tool), oldest first. */
  messages: ModelMessage[]
  /** Approvals the thread still waits for. */
  pendingApprovalIds: string[]
}

/**
 * Reads a thread's stored transcript, for a UI that shows a conversation again after a reload.
 * Only the identity that started the thread (same tenant and user id) may read it: another user's thread, an unknown id and
 * an empty thread all answer `undefined` (so ids of other users' threads cannot be probed).
 * Without a writable agent workspace, threads live in memory for the life of the definition.
 */
export async function readThread(agent: AgentDefinition, threadId: string, options: { user?: AgentUser } = {}): Promise<ThreadView | undefined> {
  const store = hostWorkspace(agent)
  if (!(await store.has(threadKey(agent.name, threadId)))) return undefined
  const thread = await loadThread(store, agent.name, threadId)
  if (thread.messages.length === 0 || !sameIdentity(threadOwner(thread), options.user)) return undefined
  return { threadId: thread.threadId, messages: thread.messages, pendingApprovalIds: thread.pendingApprovalIds }
}

/** The plain text of a message (its text parts joined), or `''` for a message without text (tool calls, tool results). */
export function messageText(message: ModelMessage): string {
  if (typeof message.content === 'string') return message.content
  return message.content.map(part => (part.type === 'text' ? part.text : '')).join('')
}

import type { ModelMessage, ToolResultPart } from 'ai'
import type { ApprovalRequest } from './types.ts'

/** The reason given to the model for approvals a new user message replaced. */
export const SUPERSEDED_REASON = 'superseded by a new user message'

type ToolContent = Extract<ModelMessage, { role: 'tool' }>['content']

/** The `tool` message that answers approvals, as the AI SDK expects (`tool-approval-response` parts). */
export function approvalResponsesMessage(approvals: readonly ApprovalRequest[]): ModelMessage {
  return {
    role: 'tool',
    content: approvals.map((approval) => ({
      type: 'tool-approval-response' as const,
      approvalId: approval.id,
      approved: approval.status === 'approved',
      ...(approval.decision?.reason ? { reason: approval.decision.reason } : {}),
    })),
  }
}

/**
 * A `tool` message that closes calls that will never continue through the SDK (superseded by a
 * new user message, or left by a failed continuation): each gets a `tool-approval-response` and
 * a `tool-result`, so the next model call sees a result for every call and no dangling request.
 */
export function closingToolMessage(entries: readonly { approval: ApprovalRequest; output: ToolResultPart['output'] }[]): ModelMessage {
  const content: ToolContent = []
  for (const { approval, output } of entries) {
    content.push({ type: 'tool-approval-response', approvalId: approval.id, approved: approval.status === 'approved', ...(approval.decision?.reason ? { reason: approval.decision.reason } : {}) })
    content.push({ type: 'tool-result', toolCallId: approval.toolCallId, toolName: approval.toolName, output })
  }
  return { role: 'tool', content }
}

/** Tool call ids that already have a result in `messages`. */
export function answeredToolCallIds(messages: readonly ModelMessage[]): Set<string> {
  const ids = new Set<string>()
  for (const message of messages) {
    if ((message.role === 'tool' || message.role === 'assistant') && typeof message.content !== 'string') {
      for (const part of message.content) if (part.type === 'tool-result') ids.add(part.toolCallId)
    }
  }
  return ids
}

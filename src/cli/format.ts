import type { AgentErrorShape } from '../errors.ts'
import type { AgentRunEvent, ApprovalRequest } from '../agent/types.ts'

/** Longest JSON shown for a tool input or result before it is cut (characters); `--verbose` shows everything. */
export const DEFAULT_JSON_LIMIT = 600

/** Compact JSON, cut to `limit` characters with a note of how much was left out. */
export function formatJson(value: unknown, limit: number = DEFAULT_JSON_LIMIT): string {
  let text: string
  try {
    text = JSON.stringify(value) ?? String(value)
  } catch {
    text = String(value)
  }
  if (limit <= 0 || text.length <= limit) return text
  return `${text.slice(0, limit)}… (${text.length - limit} more characters)`
}

/**
 * `CODE: why. Fix: fix` as one line (the message already starts with the code for host errors).
 * A scope whose `tenant` is unfilled (`MEMORY_SCOPE_INVALID`, `details.field: 'tenant'`) is, from
 * the CLI, a command run without `--tenant`: its fix says to pass it.
 */
export function formatError(error: AgentErrorShape): string {
  if (error.code === 'MEMORY_SCOPE_INVALID' && error.details?.field === 'tenant' && error.why) {
    return `${error.code}: ${error.why}. Fix: pass --tenant <id>: the agent's scope names the user's tenant, and this command ran without one`
  }
  return error.message.startsWith(`${error.code}:`) ? error.message : `${error.code}: ${error.message}`
}

/**
 * The line printed for one run event, or `undefined` for events shown otherwise (`start`,
 * `text-delta`, `finish`, `approval-request` which becomes a prompt).
 *
 * - `tool-call`: `[tool] memory_search {"query":"..."}`
 * - `tool-result`: `[result] {...}`
 * - `tool-error`: `[error] CODE: why. Fix: fix`
 * - `approval-decision`: `[approval] approved by <approver>: <reason>` (or `denied`)
 * - `error`: `[error] CODE: ...`
 */
export function formatEvent(event: AgentRunEvent, limit: number = DEFAULT_JSON_LIMIT): string | undefined {
  switch (event.type) {
    case 'tool-call':
      return `[tool] ${event.toolName} ${formatJson(event.input, limit)}`
    case 'tool-result':
      return `[result] ${formatJson(event.output, limit)}`
    case 'tool-error':
      return `[error] ${formatError(event.error)}`
    case 'approval-decision':
      return `[approval] ${event.approved ? 'approved' : 'denied'}${event.approver ? ` by ${event.approver}` : ''}${event.reason ? `: ${event.reason}` : ''}`
    case 'error':
      return `[error] ${formatError(event.error)}`
    default:
      return undefined
  }
}

/** The inline question asked for an approval request: `Approve memory_remember {...}? [y/N, then an optional reason] `. */
export function formatApprovalPrompt(approval: ApprovalRequest, limit: number = DEFAULT_JSON_LIMIT): string {
  return `Approve ${approval.toolName} ${formatJson(approval.input, limit)}? [y/N, then an optional reason] `
}

/**
 * Reads an answer to the approval prompt: the first word `y` or `yes` (any case) approves,
 * anything else (including an empty line) denies; the words after the first are the reason.
 * A line that does not start with y/yes/n/no is taken whole as the reason for denying.
 */
export function parseApprovalAnswer(line: string): { approved: boolean; reason: string | undefined } {
  const trimmed = line.trim()
  const [first = '', ...rest] = trimmed.split(/\s+/)
  const word = first.toLowerCase().replace(/[.,:;!]+$/, '')
  if (word === 'y' || word === 'yes') return { approved: true, reason: rest.join(' ') || undefined }
  if (word === 'n' || word === 'no') return { approved: false, reason: rest.join(' ') || undefined }
  return { approved: false, reason: trimmed || undefined }
}

/** One line per pending approval for `/approvals`. */
export function formatApprovalLine(approval: ApprovalRequest, limit: number = DEFAULT_JSON_LIMIT): string {
  return `${approval.id}  ${approval.toolName} ${formatJson(approval.input, limit)}  (thread ${approval.threadId}, ${approval.createdAt})`
}

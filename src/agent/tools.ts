import type { z } from 'zod'
import { agentError, isAgentError, toErrorShape, type AgentError, type AgentErrorShape } from '../errors.ts'
import { describeTextProblem, findTextProblem } from '../text.ts'
import { randomId } from './ids.ts'
import type { Invocation } from './invocation.ts'
import { createApproval } from './store.ts'
import type { AgentTool, ApprovalRequest, ToolCallOutcome, ToolExecutionContext, ToolPolicyDecision } from './types.ts'

/**
 * The tool pipeline shared by every driver: validate the input with the tool's zod schema,
 * evaluate its policy, then either stop with an approval request or execute.
 */

/** What the pipeline decided for one call before anything ran. */
export type ToolCallPlan =
  | { kind: 'allow'; input: unknown }
  | { kind: 'require-approval'; input: unknown }
  | { kind: 'error'; error: AgentError }

/** The result of executing one call. `durationMs` is wall time of `execute` in milliseconds. */
export type ToolExecution =
  | { ok: true; output: unknown; durationMs: number }
  | { ok: false; error: AgentErrorShape; durationMs: number }

/** The context a tool's `execute`, policy, reason and fingerprint functions receive. */
export function toolContext(invocation: Invocation, toolName: string, toolCallId: string, approval?: ApprovalRequest): ToolExecutionContext {
  return {
    agent: invocation.agent.name,
    runId: invocation.runId,
    threadId: invocation.threadId,
    toolName,
    toolCallId,
    ...(invocation.user ? { user: invocation.user } : {}),
    metadata: invocation.metadata,
    ...(approval ? { approval: { id: approval.id, ...(approval.decision?.approver ? { approver: approval.decision.approver } : {}), ...(approval.decision?.reason ? { reason: approval.decision.reason } : {}) } } : {}),
    ...(invocation.signal ? { signal: invocation.signal } : {}),
  }
}

/** Looks a tool up; an unknown name is an error the model can act on. */
export function findTool(invocation: Invocation, toolName: string): AgentTool | AgentError {
  const tool = Object.hasOwn(invocation.tools, toolName) ? invocation.tools[toolName] : undefined
  if (tool) return tool
  const available = Object.keys(invocation.tools)
  return agentError('TOOL_NOT_FOUND', `there is no tool named "${toolName}"`, available.length ? `call one of: ${available.join(', ')}` : 'answer without calling tools', { tool: toolName, available })
}

/** Validates `input` against the tool's zod schema; every issue is listed with its path. */
/** Deepest nesting of a tool input (objects and arrays) accepted before validation. */
export const MAX_TOOL_INPUT_DEPTH = 64

export function validateToolInput(toolName: string, tool: AgentTool, input: unknown): { ok: true; input: unknown } | { ok: false; error: AgentError } {
  // Checked before the schema: a lone surrogate would reach every later prompt, and deep nesting would overflow the stack.
  const problem = findTextProblem(input, MAX_TOOL_INPUT_DEPTH)
  if (problem) {
    const message = describeTextProblem(problem)
    return { ok: false, error: agentError('TOOL_INPUT_INVALID', `the input of "${toolName}" was refused: ${message}`, `call "${toolName}" again with valid Unicode text and flatter input`, { tool: toolName, issues: [{ path: problem.path, message }] }) }
  }
  let parsed: ReturnType<z.ZodType['safeParse']>
  try {
    parsed = (tool.inputSchema as z.ZodType).safeParse(input)
  }
  catch (error) {
    // A schema can throw instead of reporting issues (a stack overflow on deeply nested input,
    // a refinement that throws): still an input error the model can fix, never a failed run.
    const message = error instanceof RangeError ? 'the input is nested too deeply to validate' : `validation failed: ${error instanceof Error ? error.message : String(error)}`
    return { ok: false, error: agentError('TOOL_INPUT_INVALID', `the input of "${toolName}" could not be validated: ${message}`, `call "${toolName}" again with smaller, flatter input that matches its JSON Schema`, { tool: toolName, issues: [{ path: '(root)', message }] }) }
  }
  if (parsed.success) return { ok: true, input: parsed.data }
  const issues = parsed.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.') || '(root)',
    message: issue.code === 'unrecognized_keys' ? `unknown key(s) ${issue.keys.map((key) => `"${key}"`).join(', ')}` : issue.message,
  }))
  return {
    ok: false,
    error: agentError(
      'TOOL_INPUT_INVALID',
      `the input of "${toolName}" does not match its schema: ${issues.map((issue) => `${issue.path}: ${issue.message}`).join('; ')}`,
      `call "${toolName}" again with input that matches its JSON Schema`,
      { tool: toolName, issues },
    ),
  }
}

async function decidePolicy(tool: AgentTool, toolName: string, input: unknown, context: ToolExecutionContext): Promise<ToolPolicyDecision> {
  const policy = tool.policy ?? 'allow'
  const decision = typeof policy === 'function' ? await policy({ tool: toolName, input, context }) : policy
  if (decision !== 'allow' && decision !== 'deny' && decision !== 'require-approval') {
    throw agentError('TOOL_POLICY_INVALID', `the policy of "${toolName}" returned ${JSON.stringify(decision)}`, 'return "allow", "require-approval" or "deny" from the policy function')
  }
  return decision
}

/**
 * Validates and applies policy to one call. Never throws: a bad input, an unknown tool, a deny
 * or a failing policy function become `{ kind: 'error' }` with an actionable AgentError.
 */
export async function planToolCall(invocation: Invocation, toolName: string, rawInput: unknown, toolCallId: string): Promise<ToolCallPlan> {
  const tool = findTool(invocation, toolName)
  if (isAgentError(tool)) return { kind: 'error', error: tool }
  const validated = validateToolInput(toolName, tool, rawInput)
  if (!validated.ok) return { kind: 'error', error: validated.error }
  let decision: ToolPolicyDecision
  try {
    decision = await decidePolicy(tool, toolName, validated.input, toolContext(invocation, toolName, toolCallId))
  }
  catch (error) {
    const reason = isAgentError(error) ? error : agentError('TOOL_POLICY_FAILED', `the policy of "${toolName}" failed: ${error instanceof Error ? error.message : String(error)}`, 'fix the policy function; the call was not run', { tool: toolName }, error)
    return { kind: 'error', error: reason }
  }
  if (decision === 'deny') return { kind: 'error', error: deniedByPolicy(toolName) }
  return { kind: decision, input: validated.input }
}

function deniedByPolicy(toolName: string) {
  return agentError('TOOL_DENIED_BY_POLICY', `the policy of this agent does not allow "${toolName}" for this call`, 'do not retry this call; tell the user it is not allowed, or try a different approach', { tool: toolName })
}

/**
 * Creates, persists and announces an approval request for a call the policy gated. The request
 * keeps the exact validated input, a reason (the tool's `approvalReason` or
 * `"<tool> requires approval"`) and the tool's fingerprint of the state it acts on.
 * Persisted before the `approval-request` event, so whatever a client sees survives a restart.
 * `via: 'mcp'` marks a call that waits in the MCP bridge for its decision.
 */
export async function requestApproval(invocation: Invocation, toolName: string, input: unknown, toolCallId: string, options: { id?: string; via?: ApprovalRequest['via'] } = {}): Promise<ApprovalRequest> {
  const tool = invocation.tools[toolName]!
  const context = toolContext(invocation, toolName, toolCallId)
  const reason = (await tool.approvalReason?.(input, context)) ?? `${toolName} requires approval`
  const fingerprint = await tool.approvalFingerprint?.(input, context)
  const approval: ApprovalRequest = {
    id: options.id ?? randomId('apr'),
    agent: invocation.agent.name,
    runId: invocation.runId,
    threadId: invocation.threadId,
    ...(invocation.user ? { user: invocation.user } : {}),
    ...(Object.keys(invocation.metadata).length ? { metadata: invocation.metadata } : {}),
    toolName,
    toolCallId,
    input,
    reason,
    createdAt: new Date().toISOString(),
    status: 'pending',
    ...(fingerprint !== undefined ? { fingerprint } : {}),
    ...(options.via ? { via: options.via } : {}),
  }
  await createApproval(invocation.store, approval)
  invocation.emit({ type: 'approval-request', approval })
  return approval
}

/**
 * Runs the tool's `execute`. After an approval (`approval` given) it runs with the stored input
 * after checking it again: input that no longer validates fails with `TOOL_INPUT_INVALID`, a policy
 * that now says `'deny'` with `TOOL_DENIED_BY_POLICY`, and a fingerprint other than the one
 * captured at request time with `APPROVAL_CONFLICT`; in each case nothing runs. Never throws.
 */
export async function executeTool(invocation: Invocation, toolName: string, input: unknown, toolCallId: string, approval?: ApprovalRequest): Promise<ToolExecution> {
  const started = performance.now()
  const elapsed = () => Math.round((performance.now() - started) * 1000) / 1000
  const tool = findTool(invocation, toolName)
  if (isAgentError(tool)) return { ok: false, error: tool.toJSON(), durationMs: elapsed() }
  const context = toolContext(invocation, toolName, toolCallId, approval)
  try {
    if (approval) {
      // The definition may have changed since the request (new code after a restart): an approval
      // never overrides a policy that now denies, nor an input the tool no longer accepts.
      const validated = validateToolInput(toolName, tool, input)
      if (!validated.ok) return { ok: false, error: validated.error.toJSON(), durationMs: elapsed() }
      if ((await decidePolicy(tool, toolName, validated.input, context)) === 'deny') return { ok: false, error: deniedByPolicy(toolName).toJSON(), durationMs: elapsed() }
      const current = await tool.approvalFingerprint?.(input, context)
      if (current !== approval.fingerprint) {
        return {
          ok: false,
          durationMs: elapsed(),
          error: agentError('APPROVAL_CONFLICT', `the state "${toolName}" acts on changed after approval ${approval.id} was requested, so the approved call was not run`, 'read the current state and call the tool again if the change is still wanted', { approvalId: approval.id, tool: toolName }).toJSON(),
        }
      }
    }
    const output = await tool.execute(input, context)
    return { ok: true, output, durationMs: elapsed() }
  }
  catch (error) {
    return { ok: false, error: toErrorShape(error), durationMs: elapsed() }
  }
}

/** Emits the `tool-result` or `tool-error` event of an execution. */
export function emitExecution(invocation: Invocation, toolName: string, toolCallId: string, execution: ToolExecution): void {
  if (execution.ok) invocation.emit({ type: 'tool-result', toolCallId, toolName, output: execution.output, durationMs: execution.durationMs })
  else invocation.emit({ type: 'tool-error', toolCallId, toolName, error: execution.error, durationMs: execution.durationMs })
}

/** Turns an execution into the outcome a custom-run driver receives. */
export function toOutcome(toolCallId: string, execution: ToolExecution): ToolCallOutcome {
  return execution.ok ? { status: 'ok', toolCallId, output: execution.output } : { status: 'error', toolCallId, error: execution.error }
}

/**
 * One whole call through the pipeline, emitting its events (`tool-call`, then `tool-error`,
 * `approval-request` or `tool-result`). Used by the custom-run driver; the model driver uses the
 * same steps split across the AI SDK's `needsApproval` and `execute`.
 */
export async function callTool(invocation: Invocation, toolName: string, rawInput: unknown, toolCallId = randomId('call')): Promise<ToolCallOutcome> {
  invocation.emit({ type: 'tool-call', toolCallId, toolName, input: rawInput })
  const plan = await planToolCall(invocation, toolName, rawInput, toolCallId)
  if (plan.kind === 'error') {
    const error = plan.error.toJSON()
    invocation.emit({ type: 'tool-error', toolCallId, toolName, error, durationMs: 0 })
    return { status: 'error', toolCallId, error }
  }
  if (plan.kind === 'require-approval') {
    try {
      const approval = await requestApproval(invocation, toolName, plan.input, toolCallId)
      return { status: 'approval-required', toolCallId, approval }
    }
    catch (failure) {
      const error = toErrorShape(failure)
      invocation.emit({ type: 'tool-error', toolCallId, toolName, error, durationMs: 0 })
      return { status: 'error', toolCallId, error }
    }
  }
  const execution = await executeTool(invocation, toolName, plan.input, toolCallId)
  emitExecution(invocation, toolName, toolCallId, execution)
  return toOutcome(toolCallId, execution)
}

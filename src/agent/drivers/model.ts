import { jsonSchema, stepCountIs, streamText, tool, zodSchema, type ModelMessage, type ToolSet } from 'ai'
import { agentError, isAgentError, toErrorShape, type AgentErrorShape } from '../../errors.ts'
import { prepareModelCall, type Invocation } from '../invocation.ts'
import { executeTool, findTool, planToolCall, requestApproval, type ToolCallPlan, type ToolExecution } from '../tools.ts'
import type { ApprovalRequest, ModelDriver } from '../types.ts'

/** What one model-driven invocation produced. */
export interface ModelTurnResult {
  /** Messages to append to the thread transcript (approval ids already mapped to the host's). */
  responseMessages: ModelMessage[]
  /** Approvals requested in this invocation (persisted, status `'pending'`). */
  approvals: ApprovalRequest[]
  /** Executions of this invocation by tool call id (to close approved calls after a failure). */
  executions: ReadonlyMap<string, ToolExecution>
  /** Set when the run failed (model error, abort); `responseMessages` is then empty. */
  error?: AgentErrorShape
}

/**
 * Runs one model-backed invocation with AI SDK 6 `streamText` over `messages` (the thread's
 * transcript plus the new user message or the approval answers), turning stream parts into run
 * events.
 *
 * Tools are given to the SDK with their JSON Schema but without SDK-side validation, so that an
 * invalid input reaches the host pipeline and comes back to the model as a `TOOL_INPUT_INVALID`
 * tool error listing each issue (the model fixes it in its next step) instead of a generic
 * SDK error. Policy runs in the SDK's `needsApproval`; `require-approval` makes the SDK emit a
 * `tool-approval-request` part and stop, and the host persists an {@link ApprovalRequest} for it.
 *
 * `approved` maps tool call ids to approvals decided `approved` that this invocation answers:
 * the SDK executes those calls (through the pipeline, with `context.approval` set, the stored
 * input and the fingerprint check).
 */
export async function runModelTurn(invocation: Invocation, driver: ModelDriver, messages: ModelMessage[], approved: ReadonlyMap<string, ApprovalRequest> = new Map()): Promise<ModelTurnResult> {
  const plans = new Map<string, Promise<ToolCallPlan>>()
  const executions = new Map<string, ToolExecution>()
  const planFor = (name: string, input: unknown, toolCallId: string) => {
    let plan = plans.get(toolCallId)
    if (!plan) plans.set(toolCallId, plan = planToolCall(invocation, name, input, toolCallId))
    return plan
  }

  // Running executions, so that the run's outcome waits for them (see the end of this function).
  const running = new Set<Promise<unknown>>()
  const toolNames = new Map<string, string>()
  // No prototype: a model calling "constructor" or "toString" must get "no such tool", not an
  // Object.prototype member the SDK would take for a tool without `execute`.
  const tools: ToolSet = Object.create(null) as ToolSet
  for (const [name, hostTool] of Object.entries(invocation.tools)) {
    tools[name] = tool<unknown, unknown>({
      description: hostTool.description,
      // JSON Schema for the model, no validation here: the pipeline validates (see above).
      inputSchema: jsonSchema(() => zodSchema(hostTool.inputSchema).jsonSchema),
      needsApproval: async (input, { toolCallId }) => {
        if (approved.has(toolCallId)) return true // keeps the SDK from re-judging an approved call
        return (await planFor(name, input, toolCallId)).kind === 'require-approval'
      },
      execute: async (input, { toolCallId }) => {
        const approval = approved.get(toolCallId)
        const run = (async (): Promise<ToolExecution> => {
          if (approval) return executeTool(invocation, name, approval.input, toolCallId, approval)
          const plan = await planFor(name, input, toolCallId)
          return plan.kind === 'allow'
            ? executeTool(invocation, name, plan.input, toolCallId)
            : { ok: false, durationMs: 0, error: plan.kind === 'error' ? plan.error.toJSON() : agentError('APPROVAL_REQUIRED', `"${name}" requires approval and none was given`, 'wait for the user to approve the call').toJSON() }
        })()
        toolNames.set(toolCallId, name)
        running.add(run)
        let execution: ToolExecution
        try {
          execution = await run
        }
        finally {
          running.delete(run)
        }
        executions.set(toolCallId, execution)
        if (!execution.ok) throw agentError(execution.error.code, execution.error.why, execution.error.fix, execution.error.details)
        return execution.output
      },
    })
  }

  const result = streamText({
    model: driver.model,
    ...(invocation.instructions ? { system: invocation.instructions } : {}),
    messages,
    tools,
    // Capability hooks (recall, history windows) shape each model call; the transcript keeps the original messages.
    ...(invocation.hooks.prompt.length || invocation.hooks.messages.length
      ? { prepareStep: async ({ stepNumber, messages: stepMessages }: { stepNumber: number; messages: ModelMessage[] }) => prepareModelCall(invocation, stepNumber, stepMessages) }
      : {}),
    stopWhen: stepCountIs(driver.maxSteps ?? 8),
    ...(driver.temperature !== undefined ? { temperature: driver.temperature } : {}),
    ...(invocation.signal ? { abortSignal: invocation.signal } : {}),
    // Errors arrive as stream parts and fail the run; the SDK's default would also log them.
    onError: () => {},
  })

  const approvalIds = new Map<string, string>()
  const approvals: ApprovalRequest[] = []
  let error: AgentErrorShape | undefined
  const reported = new Set<string>()
  const emit: Invocation['emit'] = (event) => {
    if (event.type === 'tool-result' || event.type === 'tool-error') reported.add(event.toolCallId)
    invocation.emit(event)
  }
  for await (const part of result.fullStream) {
    switch (part.type) {
      case 'text-delta':
        if (part.text) emit({ type: 'text-delta', text: part.text })
        break
      case 'tool-call':
        emit({ type: 'tool-call', toolCallId: part.toolCallId, toolName: part.toolName, input: part.input })
        break
      case 'tool-result': {
        const execution = executions.get(part.toolCallId)
        emit({ type: 'tool-result', toolCallId: part.toolCallId, toolName: part.toolName, output: part.output, durationMs: execution?.durationMs ?? 0 })
        break
      }
      case 'tool-error': {
        const execution = executions.get(part.toolCallId)
        const shape = execution && !execution.ok ? execution.error : sdkToolError(invocation, part.toolName, part.error)
        emit({ type: 'tool-error', toolCallId: part.toolCallId, toolName: part.toolName, error: shape, durationMs: execution?.durationMs ?? 0 })
        break
      }
      case 'tool-approval-request': {
        const call = part.toolCall
        const plan = await plans.get(call.toolCallId)
        const input = plan?.kind === 'require-approval' ? plan.input : call.input
        const approval = await requestApproval(invocation, call.toolName, input, call.toolCallId)
        approvalIds.set(part.approvalId, approval.id)
        approvals.push(approval)
        break
      }
      case 'abort':
        error ??= abortedError()
        break
      case 'error':
        error ??= isAgentError(part.error) ? part.error.toJSON() : agentError('MODEL_ERROR', `the model call failed: ${part.error instanceof Error ? part.error.message : String(part.error)}`, 'check the model provider, its credentials and the request; then retry', undefined, part.error).toJSON()
        break
    }
  }
  // An abort (or a model error) ends the stream while tools may still be running, and the SDK
  // drops their results. Wait for them and report each one, so that a write that happened is
  // never hidden from the caller and nothing runs after the run reported its outcome.
  while (running.size > 0) await Promise.allSettled([...running])
  for (const [toolCallId, execution] of executions) {
    if (reported.has(toolCallId)) continue
    const toolName = toolNames.get(toolCallId) ?? ''
    emit(execution.ok
      ? { type: 'tool-result', toolCallId, toolName, output: execution.output, durationMs: execution.durationMs }
      : { type: 'tool-error', toolCallId, toolName, error: execution.error, durationMs: execution.durationMs })
  }
  if (error) return { responseMessages: [], approvals, executions, error }
  if (invocation.signal?.aborted) return { responseMessages: [], approvals, executions, error: abortedError() }
  let responseMessages: ModelMessage[]
  try {
    responseMessages = (await result.response).messages
  }
  catch (failure) {
    return { responseMessages: [], approvals, executions, error: toErrorShape(failure) }
  }
  return { responseMessages: mapApprovalIds(responseMessages, approvalIds), approvals, executions }
}

/** The run was cancelled through its `signal`. */
export function abortedError(): AgentErrorShape {
  return agentError('RUN_ABORTED', 'the run was aborted through its signal before it finished', 'start a new run when you want to continue; tool calls that completed before the abort are reported in the run and kept').toJSON()
}

// The SDK rejects calls to unknown tools and input that is not JSON before our pipeline sees
// them; give those the same codes as the pipeline would.
function sdkToolError(invocation: Invocation, toolName: string, error: unknown): AgentErrorShape {
  const found = findTool(invocation, toolName)
  if (isAgentError(found)) return found.toJSON()
  if (isAgentError(error)) return error.toJSON()
  const message = error instanceof Error ? error.message : String(error)
  return agentError('TOOL_INPUT_INVALID', `the input of "${toolName}" could not be parsed: ${message}`, `call "${toolName}" again with a JSON object that matches its JSON Schema`, { tool: toolName }).toJSON()
}

// The transcript uses the host's approval ids, so `tool-approval-response` parts written later
// by resolveApproval (after a restart, too) match the SDK's `tool-approval-request` parts.
function mapApprovalIds(messages: ModelMessage[], ids: ReadonlyMap<string, string>): ModelMessage[] {
  if (ids.size === 0) return messages
  return messages.map((message) => {
    if (message.role !== 'assistant' || typeof message.content === 'string') return message
    return {
      ...message,
      content: message.content.map((part) => part.type === 'tool-approval-request' ? { ...part, approvalId: ids.get(part.approvalId) ?? part.approvalId } : part),
    }
  })
}

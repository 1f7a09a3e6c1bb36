import type { ModelMessage } from 'ai'
import { z } from 'zod'
import { agentError, isAgentError, type AgentErrorShape } from '../../errors.ts'
import { prepareModelCall, type Invocation } from '../invocation.ts'
import { callTool } from '../tools.ts'
import type { ApprovalRequest, CustomRunContext, CustomRunDriver, RunnableTool, ToolCallOutcome } from '../types.ts'
import { abortedError } from './model.ts'

/** What one custom-run invocation produced. */
export interface CustomTurnResult {
  /** Text the driver wrote with `ctx.write`. */
  text: string
  /** Approvals requested by calls in this invocation (persisted, status `'pending'`). */
  approvals: ApprovalRequest[]
  error?: AgentErrorShape
}

/** JSON Schema of a tool input, as the model driver sends it (draft-7, input side). */
export function toolInputJsonSchema(schema: z.ZodType): Record<string, unknown> {
  try {
    return z.toJSONSchema(schema, { target: 'draft-7', io: 'input', unrepresentable: 'any' }) as Record<string, unknown>
  }
  catch {
    return { type: 'object' }
  }
}

/**
 * Runs one custom-run-backed invocation: `driver.run(ctx)` with the run's tools as
 * {@link RunnableTool}s that go through the same pipeline as a model's calls (validation, policy,
 * approvals, events). A call that needs approval returns `approval-required` and the invocation
 * ends `awaiting-approval`; calls after it in the same run still run normally.
 */
export async function runCustomTurn(invocation: Invocation, driver: CustomRunDriver, turn: { input: string | undefined; messages: ModelMessage[]; resumed?: { approval: ApprovalRequest; outcome: ToolCallOutcome } }): Promise<CustomTurnResult> {
  const approvals: ApprovalRequest[] = []
  let text = ''
  const tools: Record<string, RunnableTool> = {}
  for (const [name, tool] of Object.entries(invocation.tools)) {
    tools[name] = {
      name,
      description: tool.description,
      inputSchema: toolInputJsonSchema(tool.inputSchema),
      async call(input) {
        const outcome = await callTool(invocation, name, input)
        if (outcome.status === 'approval-required') approvals.push(outcome.approval)
        return outcome
      },
    }
  }
  // Custom-run drivers make no model calls of their own: hooks run once, for "step 0".
  const prepared = await prepareModelCall(invocation, 0, turn.input === undefined ? turn.messages : [...turn.messages, { role: 'user', content: turn.input }])
  const context: CustomRunContext = {
    agent: invocation.agent.name,
    runId: invocation.runId,
    threadId: invocation.threadId,
    ...(invocation.user ? { user: invocation.user } : {}),
    metadata: invocation.metadata,
    input: turn.input,
    messages: turn.input === undefined ? prepared.messages : prepared.messages.slice(0, -1),
    instructions: prepared.system,
    tools,
    write(chunk) {
      if (!chunk) return
      text += chunk
      invocation.emit({ type: 'text-delta', text: chunk })
    },
    ...(turn.resumed ? { resumed: turn.resumed } : {}),
    ...(invocation.signal ? { signal: invocation.signal } : {}),
  }
  try {
    await driver.run(context)
  }
  catch (error) {
    if (invocation.signal?.aborted) return { text, approvals, error: abortedError() }
    const shape = isAgentError(error) ? error.toJSON() : agentError('DRIVER_FAILED', `the custom-run driver threw: ${error instanceof Error ? error.message : String(error)}`, 'fix the driver; tool mistakes should be handled from the outcome of `tool.call()` instead of thrown', undefined, error).toJSON()
    return { text, approvals, error: shape }
  }
  if (invocation.signal?.aborted) return { text, approvals, error: abortedError() }
  return { text, approvals }
}

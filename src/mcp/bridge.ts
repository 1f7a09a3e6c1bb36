import { agentError, type AgentErrorShape } from '../errors.ts'
import { toolInputJsonSchema } from '../agent/drivers/custom-run.ts'
import { randomId } from '../agent/ids.ts'
import type { Invocation } from '../agent/invocation.ts'
import { emitExecution, executeTool, planToolCall, requestApproval } from '../agent/tools.ts'
import { awaitDecision, DEFAULT_APPROVAL_TIMEOUT_MS } from './approvals.ts'

/** One tool as the bridge lists it over MCP (`tools/list`). */
export interface BridgeTool {
  name: string
  description: string
  /** JSON Schema of the input, the same the model driver sends (draft-7, from the tool's zod schema). */
  inputSchema: Record<string, unknown>
}

/** The outcome of one bridge call, as an MCP `CallToolResult`. */
export type BridgeCallResult = {
  /** One text part: the output as JSON, or `CODE: why. Fix: fix` for an error. */
  content: Array<{ type: 'text'; text: string }>
  /** The output when it is a JSON object, or `{ error }` (an {@link AgentErrorShape}) for an error. */
  structuredContent?: Record<string, unknown>
  isError?: boolean
}

/** Options of {@link createToolBridge}. */
export interface ToolBridgeOptions {
  /** How long a `require-approval` call waits for a decision, in ms. Default 300000. */
  approvalTimeoutMs?: number
  /** Interval of MCP progress notifications while a call waits for approval, in ms. Default 10000. */
  progressIntervalMs?: number
}

/** What the MCP server asks of the bridge for one call. */
export interface BridgeCallOptions {
  /** Aborted when the MCP client cancels the request. */
  signal?: AbortSignal
  /** Sends an MCP progress notification (only when the client asked for progress). */
  progress?: (progress: number, message: string) => Promise<void> | void
}

/**
 * The invocation's tools served over MCP, through the host pipeline.
 *
 * - `list()`: exactly the invocation's resolved tools (static tools + capability tools, so memory
 *   write tools appear only when a store allows them), with the JSON Schema the model driver sends.
 *   Tools whose input schema is not a JSON object are left out (MCP requires `type: "object"`).
 * - `call(name, args)`: `tool-call` event, then validation and policy (`planToolCall`), then
 *   `executeTool`, with `tool-result` / `tool-error` events, exactly as for a custom-run driver.
 *   The scope is the one the capabilities resolved for the invocation's user: arguments cannot
 *   name another (memory tool schemas are strict, so a `scope` or `user` key is `TOOL_INPUT_INVALID`).
 *   A `require-approval` call persists a `via: 'mcp'` approval request (`approval-request` event)
 *   and waits: approved runs once with the stored input (`context.approval` set, fingerprint
 *   checked), denied returns `APPROVAL_DENIED`, no decision within `approvalTimeoutMs` returns
 *   `APPROVAL_TIMEOUT`; in those two cases nothing runs. Never throws.
 * - `close()`: cancels waiting approvals (marked denied) and waits for running calls.
 */
export function createToolBridge(invocation: Invocation, options: ToolBridgeOptions = {}) {
  const timeoutMs = options.approvalTimeoutMs ?? DEFAULT_APPROVAL_TIMEOUT_MS
  const closing = new AbortController()
  const running = new Set<Promise<unknown>>()

  function list(): BridgeTool[] {
    const tools: BridgeTool[] = []
    for (const [name, tool] of Object.entries(invocation.tools)) {
      const inputSchema = toolInputJsonSchema(tool.inputSchema)
      if (inputSchema.type !== 'object') continue
      tools.push({ name, description: tool.description, inputSchema })
    }
    return tools
  }

  async function run(name: string, args: unknown, callOptions: BridgeCallOptions): Promise<BridgeCallResult> {
    const toolCallId = randomId('call')
    invocation.emit({ type: 'tool-call', toolCallId, toolName: name, input: args })
    if (closing.signal.aborted) return failure(name, toolCallId, agentError('MCP_BRIDGE_CLOSED', 'the run this MCP server belongs to has ended', 'start a new run of the agent').toJSON())
    const plan = await planToolCall(invocation, name, args, toolCallId)
    if (plan.kind === 'error') return failure(name, toolCallId, plan.error.toJSON())
    if (plan.kind === 'allow') {
      const execution = await executeTool(invocation, name, plan.input, toolCallId)
      emitExecution(invocation, name, toolCallId, execution)
      return execution.ok ? success(execution.output) : errorResult(execution.error)
    }
    let approval
    try {
      approval = await requestApproval(invocation, name, plan.input, toolCallId, { via: 'mcp' })
    }
    catch (error) {
      return failure(name, toolCallId, agentError('APPROVAL_REQUEST_FAILED', `the approval request for "${name}" could not be stored: ${error instanceof Error ? error.message : String(error)}`, 'check the agent workspace; the call was not run').toJSON())
    }
    const signal = callOptions.signal ? AbortSignal.any([callOptions.signal, closing.signal]) : closing.signal
    const wait = await awaitDecision(invocation, approval, {
      timeoutMs,
      signal,
      ...(options.progressIntervalMs ? { tickMs: options.progressIntervalMs } : {}),
      onWaiting: (waited) => { void callOptions.progress?.(waited, `waiting for approval ${approval.id} of ${name}`) },
    })
    if (wait.kind === 'closed') return failure(name, toolCallId, wait.error)
    const decided = wait.approval
    const decision = decided.decision
    invocation.emit({ type: 'approval-decision', approvalId: decided.id, toolCallId, approved: decided.status === 'approved', ...(decision?.reason ? { reason: decision.reason } : {}), ...(decision?.approver ? { approver: decision.approver } : {}) })
    if (decided.status !== 'approved') {
      const reason = decision?.reason
      return failure(name, toolCallId, agentError('APPROVAL_DENIED', `the user denied "${name}" (approval ${decided.id})${reason ? `: ${reason}` : ''}; it was not run and nothing was written`, 'do not retry the same call; ask the user what they want instead', { approvalId: decided.id, tool: name, ...(reason ? { reason } : {}) }).toJSON())
    }
    const execution = await executeTool(invocation, name, decided.input, toolCallId, decided)
    emitExecution(invocation, name, toolCallId, execution)
    return execution.ok ? success(execution.output) : errorResult(execution.error)
  }

  function failure(name: string, toolCallId: string, error: AgentErrorShape): BridgeCallResult {
    invocation.emit({ type: 'tool-error', toolCallId, toolName: name, error, durationMs: 0 })
    return errorResult(error)
  }

  return {
    invocation,
    list,
    /** Runs one call through the pipeline (see above); never throws. */
    async call(name: string, args: unknown, callOptions: BridgeCallOptions = {}): Promise<BridgeCallResult> {
      const task = run(name, args, callOptions).catch((error: unknown) => errorResult(agentError('MCP_CALL_FAILED', `the call of "${name}" failed inside the bridge: ${error instanceof Error ? error.message : String(error)}`, 'report this error; the call may not have run').toJSON()))
      running.add(task)
      try {
        return await task
      }
      finally {
        running.delete(task)
      }
    },
    /** Cancels pending approvals (they are stored as denied) and waits until no call is running. */
    async close(): Promise<void> {
      closing.abort()
      while (running.size) await Promise.allSettled([...running])
    },
  }
}

/** The bridge made by {@link createToolBridge}. */
export type ToolBridge = ReturnType<typeof createToolBridge>

function success(output: unknown): BridgeCallResult {
  const text = output === undefined ? 'null' : JSON.stringify(output)
  const structured = typeof output === 'object' && output !== null && !Array.isArray(output)
  return { content: [{ type: 'text', text }], ...(structured ? { structuredContent: output as Record<string, unknown> } : {}) }
}

function errorResult(error: AgentErrorShape): BridgeCallResult {
  return { content: [{ type: 'text', text: error.message }], structuredContent: { error }, isError: true }
}

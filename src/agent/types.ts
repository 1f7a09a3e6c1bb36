import type { LanguageModel, ModelMessage } from 'ai'
import type { z } from 'zod'
import type { AgentErrorShape } from '../errors.ts'
import type { Workspace } from '../workspace/types.ts'

/** The host's decision for one tool call (source: the capability document's `AgentToolPolicyDecision`). */
export type ToolPolicyDecision = 'allow' | 'require-approval' | 'deny'

/** A fixed decision, or a function of the call that returns one. Default `'allow'`. */
export type ToolPolicy =
  | ToolPolicyDecision
  | ((call: { tool: string; input: unknown; context: ToolExecutionContext }) => ToolPolicyDecision | Promise<ToolPolicyDecision>)

/** The identity an invocation runs for. `id` is required; other fields are free-form claims. */
export interface AgentUser {
  id: string
  tenant?: string
  name?: string
  [claim: string]: unknown
}

/** What a tool's `execute` (and a policy function) is told about the call. */
export interface ToolExecutionContext {
  agent: string
  runId: string
  threadId: string
  toolName: string
  toolCallId: string
  user?: AgentUser
  metadata: Record<string, unknown>
  /** Set when the call runs after an approval: who approved it and why. */
  approval?: { id: string; approver?: string; reason?: string }
  signal?: AbortSignal
}

/**
 * A host tool. The zod `inputSchema` is the single source of truth: it validates input, gives
 * the TypeScript type and produces the JSON Schema the model sees (`z.toJSONSchema`).
 */
export interface AgentTool<Schema extends z.ZodType = z.ZodType, Output = unknown> {
  description: string
  inputSchema: Schema
  execute(input: z.output<Schema>, context: ToolExecutionContext): Promise<Output> | Output
  /** Policy for this tool. Default `'allow'`. */
  policy?: ToolPolicy
  /** Human-readable reason shown on an approval request. Default: `"<tool> requires approval"`. */
  approvalReason?(input: z.output<Schema>, context: ToolExecutionContext): string | Promise<string>
  /**
   * A fingerprint of the state the call acts on (for example a record's version), captured when an
   * approval is requested and compared when it is approved: a different value fails the call with
   * `APPROVAL_CONFLICT` instead of acting on the changed state.
   */
  approvalFingerprint?(input: z.output<Schema>, context: ToolExecutionContext): Promise<string | undefined> | string | undefined
}

/** A map of tool name to tool. Tool names match `^[a-zA-Z0-9_-]{1,64}$`. */
export type AgentToolSet = Record<string, AgentTool>

/** What a model-call hook is told before each model call of an invocation. */
export interface ModelCallContext {
  /** 0 for the invocation's first model call, then 1, 2, ... (custom-run drivers: only 0). */
  step: number
  /** The messages about to be sent: the thread's transcript plus this invocation's messages so far. */
  messages: ModelMessage[]
  /** The invocation's new user input; `undefined` when it continues after an approval. */
  input: string | undefined
  signal?: AbortSignal
}

/**
 * Adds text to the system prompt of one model call, or nothing (`undefined` or `''`). The text is
 * sent to the model only: it is not saved in the thread transcript (source: slots document, "The
 * block stays for the rest of the run and is not saved in the session transcript").
 */
export type PromptProvider = (call: ModelCallContext) => string | undefined | Promise<string | undefined>

/** Rewrites the messages sent to the model for one call (not the stored transcript). */
export type MessageTransform = (messages: ModelMessage[], call: ModelCallContext) => ModelMessage[] | Promise<ModelMessage[]>

/** What a finish hook receives after an invocation settled and its transcript was stored. */
export interface RunFinish {
  status: AgentRunStatus
  /** The messages this invocation added to the thread transcript (user input, assistant, tool). */
  messages: ModelMessage[]
  /** The whole thread transcript after the invocation. */
  transcript: ModelMessage[]
}

/** What a capability's `resolve` receives at each invocation. */
export interface CapabilityContext {
  /** The agent's name. */
  agent: string
  run: { runId: string; threadId: string }
  user?: AgentUser
  metadata: Record<string, unknown>
  workspace?: Workspace
  /** The agent's model when its driver is model-backed (`{ model }`), else `undefined` (history() summarizes with it). */
  model?: LanguageModel
  tools: { add(name: string, tool: AgentTool): void }
  instructions: { add(text: string): void }
  /** Adds a provider of system text evaluated before each model call (recall, preflight search). */
  prompt: { add(provider: PromptProvider): void }
  /** Adds a rewrite of the messages sent before each model call (history windows, summaries). */
  messages: { transform(transform: MessageTransform): void }
  /**
   * Runs `hook` after the invocation settled and its transcript was stored (storing history,
   * for example). A hook that throws fails the run with `CAPABILITY_FINISH_FAILED`.
   */
  onFinish(hook: (finish: RunFinish) => void | Promise<void>): void
  signal?: AbortSignal
}

/** A capability: resolved at each invocation to add tools and instructions. */
export interface AgentCapability {
  id: string
  resolve(context: CapabilityContext): void | Promise<void>
}

/** Model-backed driver: any AI SDK `LanguageModel`, run with `streamText`. */
export interface ModelDriver {
  model: LanguageModel
  /** Most model steps per invocation (tool round trips). Default 8. */
  maxSteps?: number
  /** Sampling temperature passed to the model. */
  temperature?: number
}

/** The outcome of a tool call made by a custom-run driver through `ctx.tools`. */
export type ToolCallOutcome =
  | { status: 'ok'; toolCallId: string; output: unknown }
  | { status: 'error'; toolCallId: string; error: AgentErrorShape }
  | { status: 'approval-required'; toolCallId: string; approval: ApprovalRequest }
  | { status: 'denied'; toolCallId: string; reason: string }

/** A policy-wrapped tool as a custom-run driver sees it. */
export interface RunnableTool {
  name: string
  description: string
  /** JSON Schema of the input (from the tool's zod schema). */
  inputSchema: Record<string, unknown>
  /** Runs the call through validation and policy; never throws for a model/user mistake. */
  call(input: unknown): Promise<ToolCallOutcome>
}

/** What `driver.run(ctx)` of a custom-run driver receives. */
export interface CustomRunContext {
  agent: string
  runId: string
  threadId: string
  user?: AgentUser
  metadata: Record<string, unknown>
  /** The new user input, or `undefined` when the run continues after an approval. */
  input: string | undefined
  /** The thread's transcript before this invocation (AI SDK messages). */
  messages: ModelMessage[]
  /** System instructions: the agent's plus those added by capabilities. */
  instructions: string
  /** The same policy-wrapped tools a model would get. */
  tools: Record<string, RunnableTool>
  /** Streams text to the run (emits `text-delta`). */
  write(text: string): void
  /** Set when this invocation continues a run after an approval decision. */
  resumed?: { approval: ApprovalRequest; outcome: ToolCallOutcome }
  signal?: AbortSignal
}

/** Custom-run-backed driver: your code drives the run with the resolved tools. */
export interface CustomRunDriver {
  run(context: CustomRunContext): Promise<void> | void
}

/**
 * Where the MCP bridge of one provider-backed invocation listens: Streamable HTTP on loopback
 * (`http://127.0.0.1:<random port>/mcp`), refusing every request without
 * `Authorization: Bearer <token>` (401). The token is 32 random bytes (64 hex), new for each invocation;
 * the server stops when the invocation ends, so a token is worth nothing outside its invocation and
 * nothing off this machine can reach the tools.
 */
export interface McpEndpoint {
  /** Streamable HTTP URL of the bridge, on 127.0.0.1. */
  url: string
  /** Bearer token of this invocation (64 hex characters). */
  token: string
  /** The headers to send with every request: `{ Authorization: 'Bearer <token>' }`. */
  headers: Record<string, string>
}

/**
 * The MCP `Client` of `@modelcontextprotocol/sdk` (1.32), already connected to the bridge. Typed
 * structurally so the host's public types do not depend on the SDK's; cast to the SDK's `Client`
 * for its full API.
 */
export interface McpBridgeClient {
  listTools(): Promise<{ tools: Array<{ name: string; description?: string; inputSchema: Record<string, unknown> }> }>
  callTool(params: { name: string; arguments?: Record<string, unknown> }, resultSchema?: undefined, options?: { timeout?: number; resetTimeoutOnProgress?: boolean; onprogress?: (progress: { progress: number; message?: string }) => void; signal?: AbortSignal }): Promise<Record<string, unknown>>
  close(): Promise<void>
}

/** What `provider.run(ctx)` of a provider-backed driver receives. */
export interface ProviderRunContext {
  agent: string
  runId: string
  threadId: string
  user?: AgentUser
  metadata: Record<string, unknown>
  /** The new user input. */
  input: string
  /** The thread's transcript before this invocation (AI SDK messages; text turns only). */
  messages: ModelMessage[]
  /** System instructions: the agent's plus those added by capabilities (also sent as the MCP server's `instructions`). */
  instructions: string
  /** The invocation's MCP bridge: hand `url` and `headers` to a provider that speaks MCP itself. */
  mcp: McpEndpoint
  /** Opens an SDK MCP client connected to {@link ProviderRunContext.mcp}; the host closes it when the run ends. */
  connect(): Promise<McpBridgeClient>
  /** Streams text to the run (emits `text-delta`); the text is stored as the assistant's turn. */
  write(text: string): void
  signal?: AbortSignal
}

/** A provider: an agent runtime of its own (a coding agent, a hosted assistant) that uses the tools over MCP. */
export interface AgentProvider {
  /** Shown by `agent info`. Default `'provider'`. */
  name?: string
  run(context: ProviderRunContext): Promise<void> | void
}

/**
 * Provider-backed driver (source: capability document, "Driver support": "receives the configured
 * memory tools through the provider MCP bridge"). At each invocation the host serves exactly the
 * invocation's resolved tools over MCP (same JSON Schemas, scope fixed by the host, same policies)
 * and calls `provider.run(ctx)`. A `require-approval` call blocks until `resolveApproval` decides it
 * or `approvalTimeoutMs` passes (then `APPROVAL_TIMEOUT`, nothing runs). See docs/mcp.md.
 */
export interface ProviderDriver {
  provider: AgentProvider
  /** How long a `require-approval` call waits for a decision, in milliseconds. Default 300000 (5 minutes). */
  approvalTimeoutMs?: number
}

/** Driver of an agent: model-backed, custom-run-backed or provider-backed (MCP bridge). */
export type AgentDriver = ModelDriver | CustomRunDriver | ProviderDriver

/** Input of {@link defineAgent}. */
export interface AgentDefinitionInput {
  /** Agent name (`^[a-zA-Z0-9_-]{1,64}$`). Default `'agent'`; the CLI uses the file name. */
  name?: string
  instructions?: string
  driver: AgentDriver
  workspace?: Workspace
  capabilities?: AgentCapability[]
  tools?: AgentToolSet
}

/** A validated agent definition (plain object). */
export interface AgentDefinition {
  readonly kind: 'agent'
  readonly name: string
  readonly instructions: string
  readonly driver: AgentDriver
  readonly workspace: Workspace | undefined
  readonly capabilities: readonly AgentCapability[]
  readonly tools: Readonly<AgentToolSet>
}

/** Options of {@link runAgent}. */
export interface RunAgentOptions {
  input: string
  /** Thread to continue. Default: a new thread id. */
  threadId?: string
  user?: AgentUser
  metadata?: Record<string, unknown>
  signal?: AbortSignal
}

/** An approval request, persisted in the workspace until decided. */
export interface ApprovalRequest {
  id: string
  agent: string
  runId: string
  threadId: string
  user?: AgentUser
  toolName: string
  toolCallId: string
  /** The exact (validated) input the tool will run with if approved. */
  input: unknown
  reason: string
  createdAt: string
  status: 'pending' | 'approved' | 'denied'
  /** The invocation's metadata, so that the run continues after the decision with the same capability context. */
  metadata?: Record<string, unknown>
  /** Fingerprint captured at request time (see {@link AgentTool.approvalFingerprint}). */
  fingerprint?: string
  decision?: { approved: boolean; reason?: string; approver?: string; decidedAt: string }
  /**
   * `'mcp'` when the call came through the MCP bridge: the bridge call that waits for the
   * decision runs it, so {@link resolveApproval} only stores and hands over the decision.
   */
  via?: 'mcp'
}

/** Options of {@link resolveApproval}. */
export interface ResolveApprovalOptions {
  approved: boolean
  reason?: string
  approver?: string
  /** When given, the approval must belong to this thread (else `APPROVAL_THREAD_MISMATCH`). */
  threadId?: string
  /** When given, the approval must belong to this user (else it answers as for an unknown id). */
  user?: AgentUser
  signal?: AbortSignal
}

/** Options of {@link listApprovals}. */
export interface ListApprovalsOptions {
  /** Only approvals of this thread (read through the thread's index, not every file). */
  threadId?: string
  /** Only approvals of this identity: same tenant and user id (read through the identity's index). */
  user?: AgentUser
  /** Only approvals with this status. */
  status?: ApprovalRequest['status']
}

/** Events of an {@link AgentRun}, in order. */
export type AgentRunEvent =
  | { type: 'start'; runId: string; threadId: string; agent: string }
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool-result'; toolCallId: string; toolName: string; output: unknown; durationMs: number }
  | { type: 'tool-error'; toolCallId: string; toolName: string; error: AgentErrorShape; durationMs: number }
  | { type: 'approval-request'; approval: ApprovalRequest }
  | { type: 'approval-decision'; approvalId: string; toolCallId: string; approved: boolean; reason?: string; approver?: string }
  | { type: 'finish'; status: AgentRunStatus; text: string }
  | { type: 'error'; error: AgentErrorShape }

export type AgentRunStatus = 'completed' | 'awaiting-approval' | 'failed'

/** Final outcome of a run. */
export interface AgentRunResult {
  runId: string
  threadId: string
  status: AgentRunStatus
  /** All text the agent produced in this invocation. */
  text: string
  /** Approvals still pending when the run stopped. */
  approvals: ApprovalRequest[]
  error?: AgentErrorShape
}

/** A running invocation: iterate it for events, await `result` for the outcome. Iterable once. */
export interface AgentRun extends AsyncIterable<AgentRunEvent> {
  readonly runId: string
  readonly threadId: string
  readonly result: Promise<AgentRunResult>
}

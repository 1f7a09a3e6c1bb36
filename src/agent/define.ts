import { z } from 'zod'
import { agentError } from '../errors.ts'
import type { AgentCapability, AgentDefinition, AgentDefinitionInput, AgentTool } from './types.ts'

/** Names of agents and tools: what model providers accept as a function name. */
export const NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

/** A {@link NAME_PATTERN} name close to `name` (runs of other characters as one "_", none at the ends, at most 64); '' when nothing is left. */
export function suggestedName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]+/g, '_').replace(/^_+|_+$/g, '').slice(0, 64)
}

const nameSchema = z.string().regex(NAME_PATTERN, 'must match ^[a-zA-Z0-9_-]{1,64}$')
const fn = z.custom<(...args: never[]) => unknown>((value) => typeof value === 'function', 'must be a function')

const toolSchema = z.strictObject({
  description: z.string(),
  inputSchema: z.custom<z.ZodType>((value) => value instanceof z.ZodType, 'must be a zod schema'),
  execute: fn,
  policy: z.union([z.enum(['allow', 'require-approval', 'deny']), fn]).optional(),
  approvalReason: fn.optional(),
  approvalFingerprint: fn.optional(),
})

const capabilitySchema = z.strictObject({ id: z.string().min(1), resolve: fn })
// Inside an agent, capabilities may carry extra fields (for example their options) for tooling.
const capabilityShape = z.looseObject({ id: z.string().min(1), resolve: fn })

const workspaceSchema = z.custom<AgentDefinitionInput['workspace']>(
  (value) => typeof value === 'object' && value !== null && typeof (value as { withLock?: unknown }).withLock === 'function' && typeof (value as { readJson?: unknown }).readJson === 'function',
  'must be a Workspace from createWorkspace()',
)

// Drivers: `{ model }` (AI SDK LanguageModel) or `{ run }`; strict so a typo such as `maxStep` is reported.
const modelDriverSchema = z.strictObject({
  model: z.union([z.string().min(1), z.custom<object>((value) => typeof value === 'object' && value !== null, 'must be an AI SDK LanguageModel')]),
  maxSteps: z.number().int().positive().optional(),
  temperature: z.number().optional(),
})
const customRunDriverSchema = z.strictObject({ run: fn })
// Provider-backed: the provider object may carry its own fields; the driver may not.
const providerDriverSchema = z.strictObject({
  provider: z.looseObject({ run: fn, name: z.string().min(1).optional() }),
  approvalTimeoutMs: z.number().int().positive().optional(),
})

const agentSchema = z.strictObject({
  name: nameSchema.optional(),
  instructions: z.string().optional(),
  driver: z.custom<object>((value) => typeof value === 'object' && value !== null, 'is required: `{ model }` (an AI SDK LanguageModel) or `{ run(context) }`'),
  workspace: workspaceSchema.optional(),
  capabilities: z.array(capabilityShape).optional(),
  tools: z.record(z.string(), z.unknown()).optional(),
})

/** Renders zod issues as `path: message` lines, naming unknown keys, for an actionable error. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], root = ''): string[] {
  return issues.map((issue) => {
    const path = [root, ...issue.path.map(String)].filter(Boolean).join('.') || '(root)'
    if (issue.code === 'unrecognized_keys') return `${path}: unknown key(s) ${issue.keys.map((key) => `"${key}"`).join(', ')}`
    return `${path}: ${issue.message}`
  })
}

function invalid(code: string, subject: string, problems: string[], fix: string): never {
  throw agentError(code, `${subject} are invalid: ${problems.join('; ')}`, fix, { issues: problems })
}

function checkDriver(driver: object): AgentDefinition['driver'] {
  if ('provider' in driver) {
    const parsed = providerDriverSchema.safeParse(driver)
    if (!parsed.success) invalid('AGENT_OPTIONS_INVALID', 'agent options', formatIssues(parsed.error.issues, 'driver'), 'pass `driver: { provider: { run(context) }, approvalTimeoutMs? }` (see docs/mcp.md)')
    return driver as AgentDefinition['driver']
  }
  if ('run' in driver) {
    const parsed = customRunDriverSchema.safeParse(driver)
    if (!parsed.success) invalid('AGENT_OPTIONS_INVALID', 'agent options', formatIssues(parsed.error.issues, 'driver'), 'pass `driver: { run(context) { ... } }` with no other keys')
    return driver as AgentDefinition['driver']
  }
  if ('model' in driver) {
    const parsed = modelDriverSchema.safeParse(driver)
    if (!parsed.success) invalid('AGENT_OPTIONS_INVALID', 'agent options', formatIssues(parsed.error.issues, 'driver'), 'pass `driver: { model, maxSteps?, temperature? }` with an AI SDK LanguageModel')
    return driver as AgentDefinition['driver']
  }
  invalid('AGENT_OPTIONS_INVALID', 'agent options', ['driver: must have `model` (model-backed) or `run` (custom-run-backed), or `provider` (provider-backed)'], 'pass `driver: { model }` with an AI SDK LanguageModel, `driver: { run(context) }`, or `driver: { provider: { run(context) } }`')
}

/** Validates one tool of a tool set; `where` names it in errors (`tools.save_note`). */
export function checkTool(name: string, tool: unknown, where: string): AgentTool {
  if (!NAME_PATTERN.test(name)) invalid('TOOL_NAME_INVALID', 'tool names', [`${where}: "${name}" must match ^[a-zA-Z0-9_-]{1,64}$`], 'rename the tool to letters, digits, "_" or "-" (at most 64 characters)')
  const parsed = toolSchema.safeParse(tool)
  if (!parsed.success) invalid('TOOL_OPTIONS_INVALID', 'tool options', formatIssues(parsed.error.issues, where), 'give each tool `description`, a zod `inputSchema` and `execute`, plus optional `policy`, `approvalReason` and `approvalFingerprint`')
  return tool as AgentTool
}

/**
 * Two `memory()` capabilities whose tools would share names (both have a store with the shared
 * tools `memory_search`, `memory_remember`, ..., or stores of one name with `tools: 'named'`)
 * would fail every run with `TOOL_NAME_DUPLICATE`: refused here, where the fix is one edit. Read
 * from the options a `memory()` capability keeps (`options.stores`), so this module does not
 * depend on the memory capability.
 *
 * @throws `AGENT_OPTIONS_INVALID` naming the capabilities' positions and the clashing tools.
 */
function checkMemoryCapabilities(capabilities: readonly AgentCapability[]): void {
  const seen = new Map<string, number>()
  capabilities.forEach((capability, index) => {
    const stores = capability.id === 'memory' ? (capability as { options?: { stores?: unknown } }).options?.stores : undefined
    if (!stores || typeof stores !== 'object') return
    const groups = new Set<string>()
    for (const [name, store] of Object.entries(stores as Record<string, { tools?: unknown } | undefined>)) {
      groups.add(store?.tools === 'named' ? `remember_${name} / recall_${name}` : 'memory_search, memory_remember, ... (shared by their stores)')
    }
    for (const group of groups) {
      const earlier = seen.get(group)
      if (earlier !== undefined) {
        invalid('AGENT_OPTIONS_INVALID', 'agent capabilities', [`capabilities[${earlier}] and capabilities[${index}] are both memory() capabilities with the tools ${group}: every run would fail with TOOL_NAME_DUPLICATE`], 'put every store in one memory({ stores: { notes: { ... }, facts: { ... } } }) (the tools serve all its stores, picked with their `store` argument), or give the stores of one of them tools: \'named\'')
      }
      seen.set(group, index)
    }
  })
}

/**
 * Validates an agent and returns it as a frozen plain {@link AgentDefinition}; nothing runs here.
 *
 * - `name` defaults to `'agent'` and must match `^[a-zA-Z0-9_-]{1,64}$` (it is used in workspace keys).
 * - `driver` is `{ model, maxSteps?, temperature? }`, `{ run(context) }` or `{ provider: { run(context) }, approvalTimeoutMs? }`.
 * - `capabilities` resolve at each invocation (see {@link runAgent}); `tools` are static tools.
 *
 * Unknown keys anywhere (for example `capabilites`) are errors, never ignored.
 *
 * @throws `AGENT_OPTIONS_INVALID` listing each bad key or value, `TOOL_NAME_INVALID`, `TOOL_OPTIONS_INVALID`.
 */
export function defineAgent(input: AgentDefinitionInput): AgentDefinition {
  const parsed = agentSchema.safeParse(input)
  if (!parsed.success) invalid('AGENT_OPTIONS_INVALID', 'agent options', formatIssues(parsed.error.issues), 'use only `name`, `instructions`, `driver`, `workspace`, `capabilities` and `tools`, with the documented types')
  const driver = checkDriver(input.driver)
  const tools: Record<string, AgentTool> = {}
  for (const [name, tool] of Object.entries(input.tools ?? {})) tools[name] = checkTool(name, tool, `tools.${name}`)
  checkMemoryCapabilities(input.capabilities ?? [])
  return Object.freeze({
    kind: 'agent' as const,
    name: input.name ?? 'agent',
    instructions: input.instructions ?? '',
    driver,
    workspace: input.workspace,
    capabilities: Object.freeze([...(input.capabilities ?? [])]),
    tools: Object.freeze(tools),
  })
}

/**
 * Validates a capability `{ id, resolve(context) }` and returns it frozen. `resolve` runs at each
 * invocation with a {@link CapabilityContext} and adds tools and instructions for that run.
 *
 * @throws `CAPABILITY_OPTIONS_INVALID` on a missing or empty `id`, a missing `resolve`, or unknown keys.
 */
export function defineCapability(input: AgentCapability): AgentCapability {
  const parsed = capabilitySchema.safeParse(input)
  if (!parsed.success) invalid('CAPABILITY_OPTIONS_INVALID', 'capability options', formatIssues(parsed.error.issues), 'pass `{ id, resolve(context) }` with a non-empty id')
  return Object.freeze({ id: input.id, resolve: input.resolve })
}

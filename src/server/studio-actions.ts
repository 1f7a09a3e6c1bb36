/**
 * Studio actions on a memory record (delete, pin, unpin, edit) run as a one-call run of the agent
 * with a driver of their own: the call goes through the agent's tool pipeline exactly as a model's
 * call would (input validation, the store's write policy, a persisted approval request and the
 * same approval card, audit with the approver), and nothing is written until it is approved.
 * Pin, unpin and edit are a `memory_remember` that supersedes the record (a new version with the
 * chain kept); delete is `memory_delete`.
 */
import { z } from 'zod'
import { agentError } from '../errors.ts'
import { runAgent } from '../agent/run.ts'
import type { AgentDefinition, AgentRun, ApprovalRequest, CustomRunDriver, ToolCallOutcome } from '../agent/types.ts'
import type { MemoryRecord } from '../memory/types.ts'
import type { AgentIdentity } from './types.ts'

/** Metadata key that marks a run (and so its approvals) as a studio action. */
export const STUDIO_ACTION_METADATA = 'studioAction'

/** Body of `POST …/records/:id/actions`. */
export const studioActionSchema = z.discriminatedUnion('action', [
  z.strictObject({ action: z.literal('delete'), reason: z.string().trim().min(1).max(500).optional() }),
  z.strictObject({ action: z.literal('pin') }),
  z.strictObject({ action: z.literal('unpin') }),
  z.strictObject({
    action: z.literal('edit'),
    content: z.string().trim().min(1).max(20_000),
    title: z.string().trim().min(1).max(200).optional(),
    tags: z.array(z.string().trim().min(1).max(64)).max(32).optional(),
  }),
])

/** A validated studio action. */
export type StudioAction = z.output<typeof studioActionSchema>

/** The tool call an action makes on `record`. */
export function actionCall(record: MemoryRecord, action: StudioAction): { tool: string; input: Record<string, unknown>; label: string } {
  if (action.action === 'delete') {
    return { tool: 'memory_delete', input: { id: record.id, store: record.store, ...(action.reason ? { reason: action.reason } : {}) }, label: `delete ${record.id}` }
  }
  const base = {
    content: record.content, kind: record.kind, store: record.store, tags: record.tags, pinned: record.pinned, supersedes: [record.id],
    ...(record.title !== undefined ? { title: record.title } : {}),
    ...(Object.keys(record.metadata).length ? { metadata: record.metadata } : {}),
    ...(record.confidence !== undefined ? { confidence: record.confidence } : {}),
    ...(record.episode ? { episode: record.episode } : {}),
    ...(record.keywords?.length ? { keywords: record.keywords } : {}),
    ...(record.topics?.length ? { topics: record.topics } : {}),
    provenance: { source: 'studio' },
  }
  if (action.action === 'pin') return { tool: 'memory_remember', input: { ...base, pinned: true }, label: `pin ${record.id}` }
  if (action.action === 'unpin') return { tool: 'memory_remember', input: { ...base, pinned: false }, label: `unpin ${record.id}` }
  return {
    tool: 'memory_remember',
    input: { ...base, content: action.content, ...(action.title !== undefined ? { title: action.title } : {}), ...(action.tags ? { tags: action.tags } : {}) },
    label: `edit ${record.id}`,
  }
}

function describe(outcome: ToolCallOutcome): string {
  switch (outcome.status) {
    case 'ok': {
      const output = outcome.output as { action?: unknown; record?: { id?: unknown } } | undefined
      return typeof output?.record?.id === 'string' ? `Done: ${String(output.action ?? 'written')} ${output.record.id}` : `Done: ${JSON.stringify(outcome.output)}`
    }
    case 'error': return `Not done: ${outcome.error.message}`
    case 'denied': return `Not done: ${outcome.reason}`
    case 'approval-required': return 'Waiting for approval.'
  }
}

/** The driver of studio action runs: one tool call from the run's input (`{ tool, input }` as JSON), its outcome as text. */
const actionDriver: CustomRunDriver = {
  async run(context) {
    if (context.resumed) {
      context.write(describe(context.resumed.outcome))
      return
    }
    const call = JSON.parse(context.input ?? '{}') as { tool: string; input: unknown }
    const tool = context.tools[call.tool]
    if (!tool) {
      context.write(`Not done: the agent has no ${call.tool} tool (is the store's write mode "tool"?)`)
      return
    }
    const outcome = await tool.call(call.input)
    if (outcome.status !== 'approval-required') context.write(describe(outcome))
  },
}

const actionAgents = new WeakMap<AgentDefinition, AgentDefinition>()

/** `agent` with the action driver: same name, workspace, capabilities and so the same tools and approvals. */
export function actionAgent(agent: AgentDefinition): AgentDefinition {
  let derived = actionAgents.get(agent)
  if (!derived) actionAgents.set(agent, derived = { ...agent, driver: actionDriver })
  return derived
}

/** Whether an approval was requested by a studio action (so it is continued with {@link actionAgent}). */
export function isActionApproval(approval: ApprovalRequest): boolean {
  return approval.metadata?.[STUDIO_ACTION_METADATA] === true
}

/**
 * Starts the run of `action` on `record` for `identity`, in a thread of its own.
 *
 * @throws `MEMORY_RECORD_NOT_ACTIVE` (400) for a record already superseded or deleted.
 */
export function startAction(agent: AgentDefinition, identity: AgentIdentity, record: MemoryRecord, action: StudioAction): { run: AgentRun; label: string } {
  if (record.status !== 'active') {
    throw agentError('MEMORY_RECORD_NOT_ACTIVE', `record ${record.id} is ${record.status}; only active records can be changed`, record.supersededBy ? `open its newest version ${record.supersededBy}` : 'pick an active record', { id: record.id, status: record.status })
  }
  const call = actionCall(record, action)
  const run = runAgent(actionAgent(agent), { input: JSON.stringify({ tool: call.tool, input: call.input }), user: identity, metadata: { [STUDIO_ACTION_METADATA]: true } })
  return { run, label: call.label }
}

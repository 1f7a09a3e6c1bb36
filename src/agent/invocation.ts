import { agentError, isAgentError } from '../errors.ts'
import type { Workspace } from '../workspace/types.ts'
import { checkTool } from './define.ts'
import type { Emit } from './events.ts'
import type { AgentDefinition, AgentTool, AgentUser, CapabilityContext } from './types.ts'

/** Everything one invocation (runAgent or resolveApproval) runs with, after capabilities resolved. */
export interface Invocation {
  agent: AgentDefinition
  /** Where approvals and transcripts persist (see {@link hostWorkspace}). */
  store: Workspace
  runId: string
  threadId: string
  user?: AgentUser
  metadata: Record<string, unknown>
  signal?: AbortSignal
  /** Static tools plus the tools capabilities added for this run. */
  tools: Record<string, AgentTool>
  /** The agent's instructions followed by those capabilities added, blank-line separated. */
  instructions: string
  emit: Emit
}

/**
 * Resolves every capability of `agent`, in order, for one invocation and collects the run's tools
 * and instructions. A tool name already taken (static or by an earlier capability) is an error.
 *
 * @throws `TOOL_NAME_DUPLICATE`, `TOOL_NAME_INVALID`, `TOOL_OPTIONS_INVALID`, the capability's own
 * AgentError, or `CAPABILITY_RESOLVE_FAILED` wrapping anything else it threw.
 */
export async function resolveInvocation(base: Omit<Invocation, 'tools' | 'instructions'>): Promise<Invocation> {
  const { agent } = base
  const tools: Record<string, AgentTool> = { ...agent.tools }
  const instructions = agent.instructions ? [agent.instructions] : []
  for (const capability of agent.capabilities) {
    let open = true
    const context: CapabilityContext = {
      agent: agent.name,
      run: { runId: base.runId, threadId: base.threadId },
      ...(base.user ? { user: base.user } : {}),
      metadata: base.metadata,
      workspace: agent.workspace,
      tools: {
        add(name, tool) {
          if (!open) throw agentError('CAPABILITY_LATE_ADD', `capability "${capability.id}" added tool "${name}" after its resolve() finished`, 'add tools inside resolve() (await anything you need first)')
          const checked = checkTool(name, tool, `capability "${capability.id}" tool "${name}"`)
          if (Object.hasOwn(tools, name)) {
            throw agentError('TOOL_NAME_DUPLICATE', `capability "${capability.id}" adds tool "${name}", but a tool with that name already exists in agent "${agent.name}"`, 'rename one of the tools or remove the duplicate capability', { tool: name, capability: capability.id })
          }
          tools[name] = checked
        },
      },
      instructions: {
        add(text) {
          if (!open) throw agentError('CAPABILITY_LATE_ADD', `capability "${capability.id}" added instructions after its resolve() finished`, 'add instructions inside resolve()')
          if (text.trim()) instructions.push(text)
        },
      },
      ...(base.signal ? { signal: base.signal } : {}),
    }
    try {
      await capability.resolve(context)
    }
    catch (error) {
      if (isAgentError(error)) throw error
      const message = error instanceof Error ? error.message : String(error)
      throw agentError('CAPABILITY_RESOLVE_FAILED', `capability "${capability.id}" failed to resolve: ${message}`, 'fix the capability configuration or the error it reports', { capability: capability.id }, error)
    }
    finally {
      open = false
    }
  }
  return { ...base, tools, instructions: instructions.join('\n\n') }
}

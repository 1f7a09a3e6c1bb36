import { agentError, isAgentError } from '../errors.ts'
import type { Workspace } from '../workspace/types.ts'
import { checkTool } from './define.ts'
import type { Emit } from './events.ts'
import type { ModelMessage } from 'ai'
import type { AgentDefinition, AgentTool, AgentUser, CapabilityContext, MessageTransform, ModelCallContext, PromptProvider, RunFinish } from './types.ts'

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
  /** The invocation's new user input; `undefined` when it continues after an approval. */
  input?: string
  /** Capability hooks run before each model call and after the invocation (see {@link CapabilityContext}). */
  hooks: { prompt: PromptProvider[]; messages: MessageTransform[]; finish: Array<(finish: RunFinish) => void | Promise<void>> }
  emit: Emit
}

/**
 * Resolves every capability of `agent`, in order, for one invocation and collects the run's tools
 * and instructions. A tool name already taken (static or by an earlier capability) is an error.
 *
 * @throws `TOOL_NAME_DUPLICATE`, `TOOL_NAME_INVALID`, `TOOL_OPTIONS_INVALID`, the capability's own
 * AgentError, or `CAPABILITY_RESOLVE_FAILED` wrapping anything else it threw.
 */
export async function resolveInvocation(base: Omit<Invocation, 'tools' | 'instructions' | 'hooks'>): Promise<Invocation> {
  const { agent } = base
  const tools: Record<string, AgentTool> = { ...agent.tools }
  const instructions = agent.instructions ? [agent.instructions] : []
  const hooks: Invocation['hooks'] = { prompt: [], messages: [], finish: [] }
  for (const capability of agent.capabilities) {
    let open = true
    const context: CapabilityContext = {
      agent: agent.name,
      run: { runId: base.runId, threadId: base.threadId },
      ...(base.user ? { user: base.user } : {}),
      metadata: base.metadata,
      workspace: agent.workspace,
      ...('model' in agent.driver ? { model: agent.driver.model } : {}),
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
      prompt: {
        add(provider) {
          if (!open) throw agentError('CAPABILITY_LATE_ADD', `capability "${capability.id}" added a prompt provider after its resolve() finished`, 'add prompt providers inside resolve()')
          hooks.prompt.push(provider)
        },
      },
      messages: {
        transform(transform) {
          if (!open) throw agentError('CAPABILITY_LATE_ADD', `capability "${capability.id}" added a message transform after its resolve() finished`, 'add message transforms inside resolve()')
          hooks.messages.push(transform)
        },
      },
      onFinish(hook) {
        if (!open) throw agentError('CAPABILITY_LATE_ADD', `capability "${capability.id}" added a finish hook after its resolve() finished`, 'add finish hooks inside resolve()')
        hooks.finish.push(hook)
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
  return { ...base, tools, instructions: instructions.join('\n\n'), hooks }
}

/**
 * The system prompt and messages of one model call: the invocation's instructions followed by
 * what each prompt provider returns for this call (in capability order, blank-line separated),
 * and the messages after every transform. Neither is saved in the transcript.
 *
 * @throws `CAPABILITY_PROMPT_FAILED` when a provider or transform throws (the run fails).
 */
export async function prepareModelCall(invocation: Invocation, step: number, messages: ModelMessage[]): Promise<{ system: string; messages: ModelMessage[] }> {
  const call: ModelCallContext = { step, messages, input: invocation.input, ...(invocation.signal ? { signal: invocation.signal } : {}) }
  const system = [invocation.instructions]
  let prepared = messages
  try {
    for (const provider of invocation.hooks.prompt) system.push((await provider(call)) ?? '')
    for (const transform of invocation.hooks.messages) prepared = await transform(prepared, { ...call, messages: prepared })
  }
  catch (error) {
    if (isAgentError(error)) throw error
    throw agentError('CAPABILITY_PROMPT_FAILED', `a capability failed to prepare model call ${step}: ${error instanceof Error ? error.message : String(error)}`, 'fix the prompt provider or message transform that threw', { step }, error)
  }
  return { system: system.filter((text) => text.trim() !== '').join('\n\n'), messages: prepared }
}

/**
 * Runs the finish hooks of the invocation after its transcript was stored.
 *
 * @throws `CAPABILITY_FINISH_FAILED` when a hook throws (the run then fails; what was stored stays).
 */
export async function finishInvocation(invocation: Invocation, finish: RunFinish): Promise<void> {
  for (const hook of invocation.hooks.finish) {
    try {
      await hook(finish)
    }
    catch (error) {
      if (isAgentError(error)) throw error
      throw agentError('CAPABILITY_FINISH_FAILED', `a finish hook failed after the run: ${error instanceof Error ? error.message : String(error)}`, 'fix the capability whose onFinish hook threw; the transcript of the run was stored', undefined, error)
    }
  }
}

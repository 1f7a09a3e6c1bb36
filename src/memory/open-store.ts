import { agentError, isAgentError } from '../errors.ts'
import { agentDefinitionOf, describeNonAgent } from '../agent/definition.ts'
import { resolveMemoryStore, type MemoryCapability } from './capability.ts'
import { parseMemoryOptions } from './schemas.ts'
import type { MemoryStoreConfig } from './schemas.ts'
import type { AgentCapability, AgentDefinition, AgentUser } from '../agent/types.ts'
import type { MemoryStoreAdapter, MemoryTarget } from './types.ts'

/** One memory store of an agent, resolved for one user the way an invocation would resolve it. */
export interface ResolvedMemoryStore {
  /** Store name (key of `memory({ stores })`). */
  store: string
  adapter: MemoryStoreAdapter
  /** Store name and resolved scope: pass it to every adapter call. */
  target: MemoryTarget
}

function isMemoryCapability(capability: AgentCapability): capability is MemoryCapability {
  return capability.id === 'memory' && !!(capability as Partial<MemoryCapability>).options
}

/** Picks the store: `store` when given, else the only store, else the store named `agent` (the tool rule). */
function pickStore(configs: readonly MemoryStoreConfig[], requested: string | undefined): MemoryStoreConfig {
  const names = configs.map(config => config.name)
  if (requested !== undefined) {
    const match = configs.find(config => config.name === requested)
    if (match) return match
    throw agentError('MEMORY_STORE_UNKNOWN', `the agent has no memory store named "${requested}" (stores: ${names.join(', ')})`, `pass store: ${names.map(name => JSON.stringify(name)).join(' | ')} (CLI: --store)`, { store: requested, available: names })
  }
  if (configs.length === 1) return configs[0]!
  const agentStore = configs.find(config => config.name === 'agent')
  if (agentStore) return agentStore
  throw agentError('MEMORY_STORE_REQUIRED', `the agent has several memory stores (${names.join(', ')}) and none is named "agent"`, `pass store: ${names.map(name => JSON.stringify(name)).join(' | ')} (CLI: --store)`, { available: names })
}

/** Options of {@link openMemoryStore}. */
export interface OpenMemoryStoreOptions {
  /** The user the scope function sees (`context.user`). Optional: without it, a scope keyed by the user answers `MEMORY_SCOPE_OFF`. */
  user?: AgentUser
  /** Store name; default the only store, else the store named `agent`. */
  store?: string
  /** Run id (and thread id) the scope function sees as `run.runId` / `run.threadId`. Default `cli-<base36 time>`. */
  runId?: string
  /** The invocation metadata the scope function sees (`context.metadata`), as `runAgent({ metadata })` passes it. Default `{}`. */
  metadata?: Record<string, unknown>
}

/**
 * The agent definition `value` is, or holds as its default export (a module namespace, or the
 * `{ default: agent }` a CommonJS app gets from importing a TypeScript agent).
 *
 * @throws `AGENT_DEFINITION_REQUIRED` for anything else, saying what it got and what to pass.
 */
function agentArgument(value: unknown): AgentDefinition {
  const agent = agentDefinitionOf(value)
  if (agent) return agent
  const hasDefault = !!value && typeof value === 'object' && 'default' in value
  throw agentError(
    'AGENT_DEFINITION_REQUIRED',
    `openMemoryStore() needs the agent definition defineAgent() returned as its first argument, and got ${describeNonAgent(value)}${hasDefault ? ' whose "default" is no agent definition either' : ''}`,
    hasDefault
      ? 'make the agent module end with `export default defineAgent({ driver, capabilities })` and pass its default export'
      : "pass the agent itself: the module's default export (import agent from './server/agents/<name>.ts', or mod.default of a module namespace), not the module or undefined",
    { got: describeNonAgent(value) },
  )
}

/**
 * Opens an agent's memory store for `user` from code: for seeding a store, importing, listing,
 * or a store the model may only read (`write.mode: 'off'`) that your code fills. Resolves it
 * exactly as an invocation does (`resolveMemoryStore`
 * of the capability): the scope (a scope function gets the user and a CLI run id) and the adapter
 * (a factory is created with the agent's workspace and `writable: true`). The model is not
 * involved, so code sees exactly the scope the agent's tools see for that user. Write with
 * `adapter.append(target, input, { audit: { via: 'api' } })`.
 *
 * `agent` may also be a module whose default export is the agent (`await import(...)`, or the
 * `{ default: agent }` a CommonJS app gets from a TypeScript agent).
 *
 * @throws `AGENT_DEFINITION_REQUIRED` when `agent` is no agent definition (`undefined`, `{}`, a
 * module without one); `MEMORY_NOT_CONFIGURED` when the agent has no `memory()` capability;
 * `MEMORY_STORE_UNKNOWN` / `MEMORY_STORE_REQUIRED` for a missing or ambiguous `--store`;
 * `MEMORY_SCOPE_OFF` when the scope function returns `undefined` for this user and metadata, or
 * throws while no `user` was given (a user-keyed scope);
 * `MEMORY_SCOPE_REQUIRED` / `MEMORY_SCOPE_INVALID` for a scope that would widen (never stored as global).
 */
export async function openMemoryStore(
  agentOrModule: AgentDefinition | { default: AgentDefinition },
  options: OpenMemoryStoreOptions = {},
): Promise<ResolvedMemoryStore> {
  const agent = agentArgument(agentOrModule)
  const capability = agent.capabilities.find(isMemoryCapability)
  if (!capability) {
    throw agentError('MEMORY_NOT_CONFIGURED', `agent "${agent.name}" has no memory() capability`, 'add memory({ stores: { agent: { adapter, scope } } }) to the agent\'s capabilities')
  }
  const config = pickStore(parseMemoryOptions(capability.options), options.store)
  const runId = options.runId ?? `cli-${Date.now().toString(36)}`
  const user = options.user
  let resolved: Awaited<ReturnType<typeof resolveMemoryStore>>
  try {
    resolved = await resolveMemoryStore(config, {
      agent: agent.name, run: { runId, threadId: runId }, ...(user ? { user } : {}), metadata: options.metadata ?? {},
      ...(agent.workspace ? { workspace: agent.workspace } : {}),
      writable: true,
    })
  } catch (error) {
    // A scope function that reads `user.id` without a user throws a TypeError: without a user that is the store being off.
    if (!user && isAgentError(error) && error.code === 'MEMORY_SCOPE_FUNCTION_FAILED') resolved = undefined
    else throw error
  }
  if (!resolved) {
    const whom = user ? `user "${user.id}"` : 'a call without a user'
    throw agentError('MEMORY_SCOPE_OFF', `the scope function of store "${config.name}" switched the store off for ${whom}`, user ? 'pass a user (CLI: --user) or metadata the scope function accepts' : 'pass `user` (CLI: --user), and `metadata` when the scope reads it', { store: config.name, ...(user ? { user: user.id } : {}) })
  }
  return { store: config.name, adapter: resolved.adapter, target: { store: config.name, scope: resolved.scope } }
}

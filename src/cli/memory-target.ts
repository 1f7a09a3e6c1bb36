import { agentError, isAgentError } from '../errors.ts'
import { parseMemoryOptions, parseMemoryScope } from '../memory/schemas.ts'
import type { MemoryStoreConfig } from '../memory/schemas.ts'
import type { AgentCapability, AgentDefinition, AgentUser } from '../agent/types.ts'
import type { MemoryOptions, MemoryScope, MemoryStoreAdapter, MemoryStoreFactory, MemoryTarget } from '../memory/types.ts'

/** One memory store of an agent, resolved for one user the way an invocation would resolve it. */
export interface ResolvedMemoryStore {
  /** Store name (key of `memory({ stores })`). */
  store: string
  adapter: MemoryStoreAdapter
  /** Store name and resolved scope: pass it to every adapter call. */
  target: MemoryTarget
}

/** The capability id `memory()` registers under. */
const MEMORY_CAPABILITY_ID = 'memory'

/** Name of the agent-module export the CLI reads when the capability does not expose its options. */
export const MEMORY_OPTIONS_EXPORT = 'memoryOptions'

function hasStores(value: unknown): value is MemoryOptions {
  return !!value && typeof value === 'object' && !!(value as { stores?: unknown }).stores && typeof (value as { stores?: unknown }).stores === 'object'
}

/**
 * The options of the agent's `memory()` capability: its `options` property when the capability
 * carries one, else the agent module's `memoryOptions` export (the object passed to `memory()`).
 * The capability object itself only has `id` and `resolve`, so one of the two must exist.
 */
function memoryOptionsOf(capability: AgentCapability, moduleExports: Record<string, unknown>): MemoryOptions | undefined {
  const own = (capability as AgentCapability & { options?: unknown }).options
  if (hasStores(own)) return own
  const exported = moduleExports[MEMORY_OPTIONS_EXPORT]
  return hasStores(exported) ? exported : undefined
}

function isFactory(adapter: MemoryStoreAdapter | MemoryStoreFactory): adapter is MemoryStoreFactory {
  return typeof (adapter as MemoryStoreFactory).create === 'function' && typeof (adapter as MemoryStoreFactory).kind === 'string'
}

/** Picks the store the CLI acts on: `--store`, else the only store, else the store named `agent` (the tool rule). */
function pickStore(configs: readonly MemoryStoreConfig[], requested: string | undefined): MemoryStoreConfig {
  const names = configs.map(config => config.name)
  if (requested !== undefined) {
    const match = configs.find(config => config.name === requested)
    if (match) return match
    throw agentError('MEMORY_STORE_UNKNOWN', `the agent has no memory store named "${requested}" (stores: ${names.join(', ')})`, `pass --store ${names.join(' | ')}`, { store: requested, available: names })
  }
  if (configs.length === 1) return configs[0]!
  const agentStore = configs.find(config => config.name === 'agent')
  if (agentStore) return agentStore
  throw agentError('MEMORY_STORE_REQUIRED', `the agent has several memory stores (${names.join(', ')}) and none is named "agent"`, `pass --store ${names.join(' | ')}`, { available: names })
}

/**
 * Resolves an agent's memory store for `user` as an invocation does (same validation, from
 * `parseMemoryOptions` / `parseMemoryScope`): the scope (a scope function gets the user and a CLI
 * run id) and the adapter (a factory is created with the agent's workspace and `writable: true`).
 * The model is not involved, so imports and listings see exactly the scope the agent's tools see
 * for that user.
 *
 * @throws `MEMORY_NOT_CONFIGURED` when the agent has no `memory()` capability;
 * `MEMORY_OPTIONS_UNAVAILABLE` when neither the capability nor the module exposes its options;
 * `MEMORY_STORE_UNKNOWN` / `MEMORY_STORE_REQUIRED` for a missing or ambiguous `--store`;
 * `MEMORY_SCOPE_OFF` when the scope function returns `undefined` for this user;
 * `MEMORY_SCOPE_REQUIRED` / `MEMORY_SCOPE_INVALID` for a scope that would widen (never stored as global).
 */
export async function resolveAgentMemoryStore(
  agent: AgentDefinition,
  moduleExports: Record<string, unknown>,
  options: { user: AgentUser; store?: string; runId?: string },
): Promise<ResolvedMemoryStore> {
  const capability = agent.capabilities.find(candidate => candidate.id === MEMORY_CAPABILITY_ID)
  if (!capability) {
    throw agentError('MEMORY_NOT_CONFIGURED', `agent "${agent.name}" has no memory() capability`, 'add memory({ stores: { agent: { adapter, scope } } }) to the agent\'s capabilities')
  }
  const memoryOptions = memoryOptionsOf(capability, moduleExports)
  if (!memoryOptions) {
    throw agentError('MEMORY_OPTIONS_UNAVAILABLE', `the CLI cannot see the memory stores of agent "${agent.name}"`, `export the object you pass to memory() from the agent module: \`export const ${MEMORY_OPTIONS_EXPORT} = { stores: { ... } }\``)
  }
  const config = pickStore(parseMemoryOptions(memoryOptions), options.store)
  const runId = options.runId ?? `cli-${Date.now().toString(36)}`
  let scope: MemoryScope
  if (typeof config.scope === 'function') {
    const value = await config.scope({ agent: agent.name, run: { runId, threadId: runId }, user: options.user, metadata: {}, store: config.name })
    if (value === undefined) {
      throw agentError('MEMORY_SCOPE_OFF', `the scope function of store "${config.name}" switched the store off for user "${options.user.id}"`, 'pass a --user the scope function accepts', { store: config.name, user: options.user.id })
    }
    scope = parseMemoryScope(value, config.name)
  } else {
    scope = config.scope
  }
  let adapter: MemoryStoreAdapter
  try {
    adapter = isFactory(config.adapter)
      ? await config.adapter.create({ store: config.name, agent: agent.name, workspace: agent.workspace, user: options.user, writable: true })
      : config.adapter
  } catch (error) {
    if (isAgentError(error)) throw error
    throw agentError('MEMORY_ADAPTER_FAILED', `creating the adapter of store "${config.name}" failed: ${error instanceof Error ? error.message : String(error)}`, 'check the store factory and what it needs (workspace, credentials)', { store: config.name }, error)
  }
  return { store: config.name, adapter, target: { store: config.name, scope } }
}

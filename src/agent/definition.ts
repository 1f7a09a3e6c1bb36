import { agentError } from '../errors.ts'
import { NAME_PATTERN, suggestedName } from './define.ts'
import type { AgentDefinition } from './types.ts'

/** True when `value` has the shape {@link defineAgent} returns. */
export function isAgentDefinition(value: unknown): value is AgentDefinition {
  if (!value || typeof value !== 'object') return false
  const candidate = value as Partial<AgentDefinition>
  return candidate.kind === 'agent' && typeof candidate.name === 'string' && !!candidate.driver && typeof candidate.driver === 'object'
}

/**
 * The agent definition `value` holds as its default export: `value` itself, the `default` of a
 * module namespace (`await import('./agents/support.ts')`), or the `default.default` of a
 * TypeScript agent compiled to CommonJS (a `"type": "commonjs"` package: the namespace's `default`
 * is `module.exports`, which holds the module's own `default`). `undefined` for anything else.
 */
export function agentDefinitionOf(value: unknown): AgentDefinition | undefined {
  let candidate = value
  for (let depth = 0; depth < 3; depth++) {
    if (isAgentDefinition(candidate)) return candidate
    if (!candidate || (typeof candidate !== 'object' && typeof candidate !== 'function')) return undefined
    candidate = (candidate as { default?: unknown }).default
  }
  return undefined
}

/** What `value`, which is no agent definition, is: `undefined`, `a number`, `a Promise (await it first)`, `an object with keys "default", "x"`, ... (for error messages). */
export function describeNonAgent(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  if (value instanceof Promise || (typeof value === 'object' && typeof (value as { then?: unknown }).then === 'function')) return 'a Promise (await it first, or pass () => import(...) to load it on first use)'
  if (typeof value === 'object') {
    const keys = Object.keys(value)
    return keys.length ? `an object with keys ${keys.map(key => JSON.stringify(key)).join(', ')}` : 'an empty object'
  }
  return typeof value === 'undefined' ? 'undefined' : `a ${typeof value}`
}

/**
 * `agent` named `name` when it was left with the default name `'agent'` (source:
 * `AgentDefinitionInput.name`): the Vite plugin and the CLI name it by its file, the production
 * handler by its key in `agents`, so threads, approvals and memory land under the same
 * `agents/<name>/` keys in dev and in production. An explicit name leaves `agent` unchanged.
 *
 * @throws `AGENT_NAME_INVALID` when the agent is unnamed and `name` (`where` says what it is: a
 * file, a key of `agents`) is not a valid agent name (`^[a-zA-Z0-9_-]{1,64}$`): keeping the
 * default `'agent'` would make every such agent share one workspace folder, its threads and its
 * approvals.
 */
export function withDefaultName(agent: AgentDefinition, name: string, where: string): AgentDefinition {
  if (agent.name !== 'agent' || name === 'agent') return agent
  if (!NAME_PATTERN.test(name)) {
    throw agentError('AGENT_NAME_INVALID', `the agent of ${where} has no name, and "${name}" is no agent name (^[a-zA-Z0-9_-]{1,64}$): it would share the folder agents/agent/, with its threads and approvals, with every other such agent`, `give it a name: defineAgent({ name: '${suggestedName(name) || 'support'}', ... }), or rename ${where} to letters, digits, "_" or "-"`, { name })
  }
  return Object.freeze({ ...agent, name })
}

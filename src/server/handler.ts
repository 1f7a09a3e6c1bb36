import type { H3 } from 'h3'
import { agentError, isAgentError } from '../errors.ts'
import type { AgentDefinition } from '../agent/types.ts'
import { agentDefinitionOf, describeNonAgent, withDefaultName } from '../agent/definition.ts'
import { createAgentRoutes } from './routes.ts'
import type { AgentSource, IdentifyHook } from './types.ts'

/** Options of {@link createAgentHandler}. */
export interface AgentHandlerOptions {
  /**
   * The agents served, by route name: definitions, modules whose default export is one
   * (`import * as support from ...`, or the `{ default }` a CommonJS app gets from a TypeScript
   * agent), or lazy loaders (`() => import('./agents/support.ts')`). An agent left with the
   * default name `'agent'` is named by its key here, as the Vite plugin and the CLI name it by its
   * file, so dev and production read the same threads, approvals and memory.
   */
  agents: Record<string, AgentDefinition | { default: unknown } | (() => Promise<AgentDefinition | { default: unknown }>)>
  /** Required: the verified identity of a request (for example {@link jwtIdentity}). */
  identify: IdentifyHook
  /** Prefix of every route. Default `'/api/agents'`. */
  prefix?: string
  /** Most bytes of a request body; larger ones get 413 `REQUEST_TOO_LARGE`. Default 262,144 (256 KiB). */
  maxBodyBytes?: number
  /**
   * The studio at `<prefix>/studio/` (docs/studio.md): `true` serves the built UI of the package,
   * `{ dir }` a UI built elsewhere. Every data route still asks `identify` and answers only for
   * that identity's own scope; runs are journalled per thread. Default `false` (off in production).
   */
  studio?: boolean | { dir?: string }
}

/** Default prefix of the production routes. */
export const DEFAULT_HANDLER_PREFIX = '/api/agents'

/**
 * The agent routes for production (`vite-agent-memory/server`): the same h3 v2
 * app the dev plugin serves, without the dev user list. Returns an `H3` app: call
 * `app.fetch(request)` from any web-standard server, `serve(app)` from `h3`, or mount
 * `toNodeHandler(app)` from `h3/node` as Node middleware.
 *
 * @throws `SERVER_IDENTIFY_REQUIRED` without `identify`; `SERVER_OPTIONS_INVALID` for an unknown
 * option key, a `studio` that is neither a boolean nor `{ dir }`, or an agent entry that is
 * neither a definition (nor a module whose default export is one) nor a loader; a loader whose
 * module has no agent default export fails the requests for that agent with `SERVER_OPTIONS_INVALID`.
 */
export function createAgentHandler(options: AgentHandlerOptions): H3 {
  const known = ['agents', 'identify', 'prefix', 'maxBodyBytes', 'studio']
  const unknown = Object.keys(options ?? {}).filter(key => !known.includes(key))
  if (unknown.length) throw agentError('SERVER_OPTIONS_INVALID', `createAgentHandler() got unknown option ${unknown.map(key => `"${key}"`).join(', ')}`, `use only ${known.join(', ')}`, { options: unknown })
  if (typeof options?.identify !== 'function') {
    throw agentError('SERVER_IDENTIFY_REQUIRED', 'createAgentHandler() needs an identify(event) hook: no route may run without a verified identity', 'pass identify: jwtIdentity({ secret }) or your own hook returning { id, tenant? }')
  }
  if (options.maxBodyBytes !== undefined && (!Number.isInteger(options.maxBodyBytes) || options.maxBodyBytes < 1)) {
    throw agentError('SERVER_OPTIONS_INVALID', `maxBodyBytes must be a positive whole number of bytes, got ${String(options.maxBodyBytes)}`, 'pass for example maxBodyBytes: 262144, or leave it out for that default', { option: 'maxBodyBytes' })
  }
  const studio = options.studio
  if (studio !== undefined && typeof studio !== 'boolean' && (studio === null || typeof studio !== 'object' || Array.isArray(studio) || (studio.dir !== undefined && typeof studio.dir !== 'string'))) {
    throw agentError('SERVER_OPTIONS_INVALID', 'studio must be true, false or { dir: string }', 'pass studio: true to serve the studio of the package, or studio: { dir: "path/to/studio" } for a UI built elsewhere', { option: 'studio' })
  }
  const entries = options.agents ?? {}
  const definitions = new Map<string, AgentDefinition>()
  for (const [name, entry] of Object.entries(entries)) {
    if (typeof entry === 'function') continue
    const definition = agentDefinitionOf(entry)
    if (!definition) throw notAnAgent(`agents.${name} is neither an agent definition nor a loader function`, entry, name)
    definitions.set(name, withDefaultName(definition, name, entryName(name)))
  }
  const cache = new Map<string, Promise<AgentDefinition>>()
  const source: AgentSource = {
    list: async () => Object.keys(entries),
    load(name) {
      if (!Object.hasOwn(entries, name)) return Promise.resolve(undefined)
      const definition = definitions.get(name)
      if (definition) return Promise.resolve(definition)
      let loading = cache.get(name)
      if (!loading) {
        const loader = entries[name] as () => Promise<unknown>
        loading = Promise.resolve().then(loader).then(loaded => {
          const loadedDefinition = agentDefinitionOf(loaded)
          if (!loadedDefinition) throw notAnAgent(`the loader of agents.${name} resolved to no agent definition`, loaded, name)
          return withDefaultName(loadedDefinition, name, entryName(name))
        }, (error: unknown) => {
          // A setup fault of the server: an error of this package says what it is; any other
          // error's message (it may hold a connection string) stays in the server's log.
          if (isAgentError(error)) throw agentError('AGENT_LOAD_FAILED', `the loader of agent "${name}" failed with ${error.code}: ${error.why}`, error.fix, { agent: name }, error)
          console.error(`agents.${name}: the loader failed:`, error)
          throw agentError('AGENT_LOAD_FAILED', `the loader of agent "${name}" failed`, 'see the server log for the loader\'s error, and fix the agent module or its loader', { agent: name })
        })
        loading.catch(() => cache.delete(name))
        cache.set(name, loading)
      }
      return loading
    },
  }
  return createAgentRoutes({ agents: source, identify: options.identify, prefix: options.prefix ?? DEFAULT_HANDLER_PREFIX, mode: 'production', ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}), ...(studio ? { studio } : {}) })
}

/** How errors name the `agents` entry of key `name`. */
function entryName(name: string): string {
  return `agents[${JSON.stringify(name)}]`
}

/** `why`, with what an `agents` entry (or what its loader resolved to) is instead of an agent definition, and the fix for it. */
function notAnAgent(why: string, value: unknown, name: string) {
  const hasDefault = !!value && typeof value === 'object' && 'default' in value
  return agentError(
    'SERVER_OPTIONS_INVALID',
    `${why} (got ${describeNonAgent(value)})`,
    hasDefault
      ? `its "default" is not an agent definition either: make the module end with \`export default defineAgent({ driver, capabilities })\``
      : `pass defineAgent(...), the module's default export (import ${name} from "./agents/${name}.ts", or mod.default), or () => import("./agents/${name}.ts")`,
    { agent: name },
  )
}

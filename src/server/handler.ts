import type { H3 } from 'h3'
import { agentError } from '../errors.ts'
import type { AgentDefinition } from '../agent/types.ts'
import { createAgentRoutes } from './routes.ts'
import type { AgentSource, IdentifyHook } from './types.ts'

/** Options of {@link createAgentHandler}. */
export interface AgentHandlerOptions {
  /** The agents served, by route name: definitions, or lazy loaders (`() => import('./agents/support.ts')` with a default export). */
  agents: Record<string, AgentDefinition | (() => Promise<AgentDefinition | { default: AgentDefinition }>)>
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
 * neither a definition nor a loader.
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
  for (const [name, entry] of Object.entries(entries)) {
    if (typeof entry !== 'function' && (entry as Partial<AgentDefinition>)?.kind !== 'agent') {
      throw agentError('SERVER_OPTIONS_INVALID', `agents.${name} is neither an agent definition nor a loader function`, 'pass defineAgent(...) or () => import("./agents/<name>.ts")', { agent: name })
    }
  }
  const cache = new Map<string, Promise<AgentDefinition>>()
  const source: AgentSource = {
    list: async () => Object.keys(entries),
    load(name) {
      if (!Object.hasOwn(entries, name)) return Promise.resolve(undefined)
      const entry = entries[name]!
      if (typeof entry !== 'function') return Promise.resolve(entry)
      let loading = cache.get(name)
      if (!loading) {
        loading = entry().then(loaded => ('default' in loaded ? loaded.default : loaded))
        loading.catch(() => cache.delete(name))
        cache.set(name, loading)
      }
      return loading
    },
  }
  return createAgentRoutes({ agents: source, identify: options.identify, prefix: options.prefix ?? DEFAULT_HANDLER_PREFIX, mode: 'production', ...(options.maxBodyBytes !== undefined ? { maxBodyBytes: options.maxBodyBytes } : {}), ...(studio ? { studio } : {}) })
}

import type { IncomingMessage, ServerResponse } from 'node:http'
import { resolve } from 'node:path'
import type { Plugin, ViteDevServer } from 'vite'
import { toNodeHandler } from 'h3/node'
import { agentError, causeOf } from '../errors.ts'
import { listAgents } from '../cli/load-agent.ts'
import { agentDefinitionOf, withDefaultName } from '../agent/definition.ts'
import { withMemoryFolder } from '../memory/folder.ts'
import { missingOptionalDependencyOf } from '../optional-dependency.ts'
import { createAgentRoutes, DEFAULT_AGENTS_PREFIX } from '../server/routes.ts'
import { discoverScopeUsers } from '../server/studio-routes.ts'
import type { AgentIdentity, AgentSource, IdentifyHook } from '../server/types.ts'

/** Users the dev user picker offers by default. */
export const DEFAULT_DEV_USERS: readonly string[] = ['demo', 'ann', 'ben']

/** Options of {@link agentMemory}. */
export interface AgentMemoryPluginOptions {
  /** Folder holding `server/agents`, resolved against Vite's `root`. Default: Vite's `root`. */
  root?: string
  /** Prefix of the dev routes. Default `'/__agents'`. */
  prefix?: string
  /** User ids the playground may pick from (dev only). Default `['demo', 'ann', 'ben']`. */
  users?: readonly string[]
  /** Identity of a dev request. Default: {@link devIdentity} over `users` and the users of the workspace's scopes. */
  identify?: IdentifyHook
  /** The studio at `<prefix>/studio/` (docs/studio.md); `{ dir }` serves a UI built elsewhere. Default `true`. */
  studio?: boolean | { dir?: string }
}

/** Options of {@link devIdentity}. */
export interface DevIdentityOptions {
  /**
   * More user ids to accept, looked up when a request names a user outside `users` (the studio
   * passes the `user` values of the memory scopes present in the workspace, so an imported
   * speaker's scope can be opened).
   */
  discover?: () => Promise<readonly string[]>
}

/**
 * The dev identity hook: the user named by the `x-agent-user` header (or the `user` query
 * parameter, for download links), which must be one of `users` (or of `options.discover()`);
 * the first user when none is named. Dev only: it trusts the browser, so never use it in production.
 *
 * @throws `DEV_USER_UNKNOWN` (401) for a user outside the list.
 */
export function devIdentity(users: readonly string[] = DEFAULT_DEV_USERS, options: DevIdentityOptions = {}): IdentifyHook {
  return async (event): Promise<AgentIdentity | undefined> => {
    const named = event.req.headers.get('x-agent-user') || new URL(event.req.url).searchParams.get('user') || users[0]
    if (named === undefined) return undefined
    if (!users.includes(named) && !(options.discover && (await options.discover()).includes(named))) {
      throw agentError('DEV_USER_UNKNOWN', `the dev user "${named}" is not in the plugin's user list`, `pick one of ${users.join(', ')}, or add it to agentMemory({ users })`, { user: named, users })
    }
    return { id: named }
  }
}

/**
 * Agents under `<root>/server/agents` (`<name>.ts` and `<name>/agent.ts`), loaded through the dev
 * server's module graph (`ssrLoadModule`), so an edit to an agent or anything it imports is
 * picked up by the next request without a restart.
 */
export function viteAgentSource(server: ViteDevServer, root: string): AgentSource {
  return {
    list: async () => listAgents(root).map(agent => agent.name),
    async load(name) {
      const location = listAgents(root).find(agent => agent.name === name)
      if (!location) return undefined
      let loaded: Record<string, unknown>
      try {
        loaded = await server.ssrLoadModule(location.file)
      } catch (error) {
        const cause = causeOf(missingOptionalDependencyOf(error) ?? error)
        throw agentError('AGENT_LOAD_FAILED', `loading ${location.file} failed: ${cause.text}`, `${cause.fix ?? 'fix the error in the agent module'}; the dev server picks up the fix on the next request`, { file: location.file }, error)
      }
      const candidate = agentDefinitionOf(loaded)
      if (!candidate) {
        throw agentError('AGENT_INVALID_MODULE', `${location.file} does not default-export an agent definition`, 'end the module with `export default defineAgent({ driver, capabilities })`', { file: location.file })
      }
      // An agent left with the default name takes its file name, as in the CLI.
      const named = withDefaultName(candidate, location.name, location.file)
      // The agent directory's memory/ folder is part of the agent (its files are read at each run).
      return withMemoryFolder(named, location.file)
    },
  }
}

/** A connect middleware for Vite's dev server. */
export type DevMiddleware = (req: IncomingMessage, res: ServerResponse, next: (error?: unknown) => void) => void

/**
 * The middleware the plugin mounts: requests under `prefix` go to the agent routes, everything
 * else to the next middleware. Exposed for setups that mount it themselves (a test config that
 * loads the plugin lazily, a custom dev server).
 */
export function createDevMiddleware(server: ViteDevServer, options: AgentMemoryPluginOptions = {}): DevMiddleware {
  const prefix = (options.prefix ?? DEFAULT_AGENTS_PREFIX).replace(/\/+$/, '')
  const users = options.users ?? DEFAULT_DEV_USERS
  const root = resolve(server.config.root, options.root ?? '.')
  const agents = viteAgentSource(server, root)
  const identify = options.identify ?? devIdentity(users, { discover: () => discoverScopeUsers(agents) })
  const app = createAgentRoutes({ agents, identify, prefix, mode: 'dev', devUsers: users, studio: options.studio ?? true })
  const handle = toNodeHandler(app)
  return (req, res, next) => {
    const path = req.url?.split('?')[0] ?? ''
    if (path !== prefix && !path.startsWith(`${prefix}/`)) return next()
    Promise.resolve(handle(req, res)).catch(next)
  }
}

function invalidOption(option: string, why: string, fix: string): Error {
  return agentError('PLUGIN_OPTIONS_INVALID', `agentMemory() option \`${option}\` ${why}`, fix, { option })
}

/**
 * The values of the plugin's options. A prefix without a leading `/` would match no request (the
 * routes silently absent), and `/` alone every request (the app's own pages answered by the agent
 * routes), so both are errors, as is a `studio` that is not `true`, `false` or `{ dir }`.
 */
function checkPluginOptions(options: AgentMemoryPluginOptions): void {
  const { root, prefix, users, identify, studio } = options
  if (root !== undefined && (typeof root !== 'string' || root === '')) throw invalidOption('root', `must be a non-empty folder path, got ${JSON.stringify(root)}`, 'pass the folder holding server/agents, relative to Vite\'s root, or leave it out for Vite\'s root')
  if (prefix !== undefined && (typeof prefix !== 'string' || !prefix.startsWith('/') || prefix.replace(/\/+$/, '') === '')) {
    throw invalidOption('prefix', `must be a path below / starting with "/", got ${JSON.stringify(prefix)} (without "/" it matches no request, and "/" alone would take every request of the app)`, `pass a path such as "/__agents" (the default) or "/api/agents"`)
  }
  if (users !== undefined && (!Array.isArray(users) || users.some(user => typeof user !== 'string' || user === ''))) throw invalidOption('users', `must be an array of non-empty user ids, got ${JSON.stringify(users)}`, 'pass for example users: [\'demo\', \'ann\', \'ben\'] (the default)')
  if (identify !== undefined && typeof identify !== 'function') throw invalidOption('identify', 'must be a function of the request event', 'pass identify: (event) => ({ id }) or leave it out for the dev identity')
  const studioOk = studio === undefined || typeof studio === 'boolean' || (typeof studio === 'object' && studio !== null && !Array.isArray(studio) && Object.keys(studio).every(key => key === 'dir') && (studio.dir === undefined || (typeof studio.dir === 'string' && studio.dir !== '')))
  if (!studioOk) throw invalidOption('studio', `must be true, false or { dir: string }, got ${JSON.stringify(studio)}`, 'pass studio: false to turn the studio off, or studio: { dir: "path/to/studio" } for a UI built elsewhere')
}

/**
 * The Vite plugin (`vite-agent-memory/vite`). In `vite dev` only (`apply:
 * 'serve'`, `configureServer`; nothing is added to a build or to `vite preview`), it serves the
 * agent routes of `createAgentRoutes` under `prefix`: list agents, run one and stream its events
 * as NDJSON or SSE, list/approve/deny approvals, and the memory inspector (stores, records,
 * search, record history, raw JSONL lines, verify, export), and the studio UI at
 * `<prefix>/studio/` with its routes (docs/studio.md; `studio: false` turns it off). The identity
 * comes from `identify` (default {@link devIdentity} over `users` and the users of the
 * workspace's memory scopes).
 */
export function agentMemory(options: AgentMemoryPluginOptions = {}): Plugin {
  const known = ['root', 'prefix', 'users', 'identify', 'studio']
  const unknown = Object.keys(options).filter(key => !known.includes(key))
  if (unknown.length) throw agentError('PLUGIN_OPTIONS_INVALID', `agentMemory() got unknown option ${unknown.map(key => `"${key}"`).join(', ')}`, `use only ${known.join(', ')}`, { options: unknown })
  checkPluginOptions(options)
  const prefix = (options.prefix ?? DEFAULT_AGENTS_PREFIX).replace(/\/+$/, '')
  const users = options.users ?? DEFAULT_DEV_USERS
  return {
    name: 'vite-agent-memory',
    apply: 'serve',
    configureServer(server) {
      const root = resolve(server.config.root, options.root ?? '.')
      server.middlewares.use(createDevMiddleware(server, { ...options, prefix, users }))
      server.httpServer?.once('listening', () => {
        const names = listAgents(root).map(agent => agent.name)
        server.config.logger.info(`  ➜  Agents:  ${prefix}/agents (${names.length ? names.join(', ') : `none in ${root}/server/agents`})`)
        if (options.studio !== false) server.config.logger.info(`  ➜  Studio:  ${prefix}/studio/`)
      })
    },
  }
}

/**
 * `agent studio [--root dir] [--port n] [--host h] [--users a,b]`: the studio without Vite. The
 * same h3 routes and the same dev identity rule as the Vite plugin (`agentMemory()`), over the
 * agents of `<root>/server/agents`, on a Node HTTP server bound to loopback by default (the dev
 * identity trusts the browser). See docs/studio.md.
 */
import { createServer, type Server } from 'node:http'
import { defineCommand } from 'citty'
import { consola } from 'consola'
import { agentError, toErrorShape } from '../../errors.ts'
import type { AgentDefinition } from '../../agent/types.ts'
import type { AgentSource } from '../../server/types.ts'
import { formatError } from '../format.ts'
import { rejectUnknownOptions } from '../options.ts'
import { listAgents, loadAgent, resolveRoot } from '../load-agent.ts'

// Loaded when a command runs, so `agent --help` loads none of them.
const h3Node = () => import('h3/node')
const routes = () => import('../../server/routes.ts')
const studioRoutes = () => import('../../server/studio-routes.ts')
const vitePlugin = () => import('../../vite/plugin.ts')

/** Default port of `agent studio`. */
export const DEFAULT_STUDIO_PORT = 4317

/** Agents of `root`, each module loaded once (a failed load is tried again on the next request). */
export function directoryAgentSource(root: string): AgentSource {
  const loaded = new Map<string, Promise<AgentDefinition>>()
  return {
    list: async () => listAgents(root).map(agent => agent.name),
    async load(name) {
      if (!listAgents(root).some(agent => agent.name === name)) return undefined
      let loading = loaded.get(name)
      if (!loading) {
        loading = loadAgent(root, name).then(found => found.agent)
        loading.catch(() => loaded.delete(name))
        loaded.set(name, loading)
      }
      return loading
    },
  }
}

/** Options of {@link startStudioServer}. */
export interface StudioServerOptions {
  root: string
  /** Default {@link DEFAULT_STUDIO_PORT}; 0 picks a free port. */
  port?: number
  /** Default `127.0.0.1`. */
  host?: string
  /** Users the user picker offers besides those of the workspace's scopes. Default `['demo', 'ann', 'ben']`. */
  users?: readonly string[]
}

/**
 * Serves the agent routes with the studio under `/__agents` and redirects `/` to the studio.
 * Resolves with the listening server and the studio's URL.
 */
export async function startStudioServer(options: StudioServerOptions): Promise<{ server: Server; url: string }> {
  const [{ createAgentRoutes, DEFAULT_AGENTS_PREFIX }, { discoverScopeUsers }, { DEFAULT_DEV_USERS, devIdentity }, { toNodeHandler }] = await Promise.all([routes(), studioRoutes(), vitePlugin(), h3Node()])
  const users = options.users ?? DEFAULT_DEV_USERS
  const agents = directoryAgentSource(options.root)
  const app = createAgentRoutes({ agents, identify: devIdentity(users, { discover: () => discoverScopeUsers(agents) }), prefix: DEFAULT_AGENTS_PREFIX, mode: 'dev', devUsers: users, studio: true })
  const handle = toNodeHandler(app)
  const studioPath = `${DEFAULT_AGENTS_PREFIX}/studio/`
  const server = createServer((req, res) => {
    const path = req.url?.split('?')[0] ?? '/'
    if (path === '/' || path === '/favicon.ico') {
      res.writeHead(path === '/' ? 302 : 301, { location: path === '/' ? studioPath : `${studioPath}favicon.svg` }).end()
      return
    }
    Promise.resolve(handle(req, res)).catch((error: unknown) => {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: toErrorShape(error) }))
    })
  })
  const host = options.host ?? '127.0.0.1'
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port ?? DEFAULT_STUDIO_PORT, host, () => resolve())
  })
  const address = server.address() as { port: number }
  return { server, url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}${studioPath}` }
}

function portOf(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const port = Number(value)
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw agentError('CLI_INVALID_OPTION', `--port ${value} is not a port number`, 'pass --port with a whole number from 0 (any free port) to 65535')
  return port
}

export const studioCommand = defineCommand({
  meta: { name: 'studio', description: 'Serve the studio (threads, memory, log) for the agents of a project, without Vite' },
  args: {
    root: { type: 'string', description: 'Project root holding server/agents (default: cwd, or ./playground when cwd has playground/server/agents)' },
    port: { type: 'string', description: `Port (default ${DEFAULT_STUDIO_PORT}; 0 for any free port)` },
    host: { type: 'string', description: 'Address to listen on (default 127.0.0.1: the dev identity trusts the browser, keep it on loopback)' },
    users: { type: 'string', description: 'Comma-separated user ids for the user picker (default demo,ann,ben; users of the workspace\'s scopes are added)' },
  },
  async run({ args, cmd }) {
    try {
      rejectUnknownOptions(args, cmd.args as Record<string, unknown>)
      const root = resolveRoot(args.root)
      // Agents resolve their default workspace (`.agent/workspace`) against the project root, as in `agent dev`.
      process.chdir(root)
      const users = args.users ? args.users.split(',').map(user => user.trim()).filter(Boolean) : undefined
      const port = portOf(args.port)
      const { url } = await startStudioServer({ root, ...(port !== undefined ? { port } : {}), ...(args.host ? { host: args.host } : {}), ...(users?.length ? { users } : {}) })
      const names = listAgents(root).map(agent => agent.name)
      process.stdout.write(`Studio: ${url}\nAgents: ${names.length ? names.join(', ') : `none in ${root}/server/agents`}\n`)
    } catch (error) {
      consola.error(formatError(toErrorShape(error)))
      process.exitCode = 1
    }
  },
})

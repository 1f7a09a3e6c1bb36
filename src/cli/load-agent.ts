import { existsSync, readdirSync, statSync } from 'node:fs'
import { basename, join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { agentError, causeOf } from '../errors.ts'
import type { AgentDefinition } from '../agent/types.ts'
import { missingOptionalDependencyOf } from '../optional-dependency.ts'
import { trackLoadedAgent } from './release-agent.ts'

// Loaded when a command runs, so `agent --help` loads none of them.
const memoryFolder = () => import('../memory/folder.ts')
const agentDefinition = () => import('../agent/definition.ts')

/** Extensions tried for an agent module, in order. */
const AGENT_EXTENSIONS = ['.ts', '.mts', '.js', '.mjs'] as const

/** An agent module found on disk. */
export interface AgentLocation {
  /** Agent name: the file name (`support.ts` -> `support`) or the folder name (`support/agent.ts`). */
  name: string
  /** Absolute path of the module. */
  file: string
}

/**
 * The project root the CLI works in: `--root` when given (resolved against `cwd`), else `cwd`
 * itself, or `<cwd>/playground` when `cwd` has no `server/agents` but `playground/server/agents`
 * exists (so `agent dev` works from the repository root).
 */
export function resolveRoot(root: string | undefined, cwd: string = process.cwd()): string {
  if (root) return resolve(cwd, root)
  if (!existsSync(join(cwd, 'server', 'agents')) && existsSync(join(cwd, 'playground', 'server', 'agents'))) return join(cwd, 'playground')
  return cwd
}

/** Every agent under `<root>/server/agents`: `<name>.ts` files and `<name>/agent.ts` folders, sorted by name. */
export function listAgents(root: string): AgentLocation[] {
  const dir = join(root, 'server', 'agents')
  if (!existsSync(dir)) return []
  const found: AgentLocation[] = []
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry)
    if (statSync(path).isDirectory()) {
      const file = AGENT_EXTENSIONS.map(ext => join(path, `agent${ext}`)).find(existsSync)
      if (file) found.push({ name: entry, file })
      continue
    }
    const ext = AGENT_EXTENSIONS.find(candidate => entry.endsWith(candidate) && !entry.endsWith(`.d${candidate}`))
    if (ext) found.push({ name: basename(entry, ext), file: path })
  }
  return found.sort((a, b) => a.name.localeCompare(b.name))
}

/**
 * Finds the module of agent `name` under `<root>/server/agents`.
 *
 * @throws `AGENT_NOT_FOUND` (details: `root`, `available`) listing the agents that exist.
 */
export function findAgent(root: string, name: string): AgentLocation {
  const agents = listAgents(root)
  const match = agents.find(agent => agent.name === name)
  if (match) return match
  const available = agents.map(agent => agent.name)
  throw agentError(
    'AGENT_NOT_FOUND',
    `no agent named "${name}" in ${join(root, 'server', 'agents')} (looked for ${name}.ts and ${name}/agent.ts)${available.length ? `; agents found: ${available.join(', ')}` : '; no agents found there'}`,
    available.length ? `pass one of --agent ${available.join(' | ')}, or --root <dir> for another project` : 'create server/agents/<name>.ts with a default export from defineAgent(), or pass --root <dir>',
    { root, available },
  )
}

/**
 * Imports a module by absolute path. A plain `import()` keeps one module graph with the CLI
 * (possible when the CLI itself runs under tsx, or for `.js` agents); when Node cannot load
 * TypeScript (the CLI runs from `dist`), tsx's loader API (`tsImport`) compiles it instead.
 */
export async function importModule(file: string): Promise<Record<string, unknown>> {
  const url = pathToFileURL(file).href
  try {
    return (await import(/* @vite-ignore */ url)) as Record<string, unknown>
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw error
    const { tsImport } = await import('tsx/esm/api')
    return (await tsImport(url, import.meta.url)) as Record<string, unknown>
  }
}

/** An agent loaded from its module. */
export interface LoadedAgent {
  agent: AgentDefinition
  location: AgentLocation
}

/**
 * Loads agent `name` from `<root>/server/agents` and returns its definition. An agent left with
 * the default name `'agent'` takes its file name (source: `AgentDefinitionInput.name`).
 *
 * @throws `AGENT_NOT_FOUND` when no module matches; `AGENT_INVALID_MODULE` when the default export
 * is not an agent definition; `AGENT_LOAD_FAILED` when the module throws while loading.
 */
export async function loadAgent(root: string, name: string): Promise<LoadedAgent> {
  const location = findAgent(root, name)
  let loaded: Record<string, unknown>
  try {
    loaded = await importModule(location.file)
  } catch (error) {
    const cause = causeOf(missingOptionalDependencyOf(error) ?? error)
    throw agentError('AGENT_LOAD_FAILED', `loading ${location.file} failed: ${cause.text}`, cause.fix ?? 'fix the error in the agent module (run it with `npx tsx <file>` to see the full stack)', { file: location.file }, error)
  }
  // A TypeScript agent in a `"type": "commonjs"` package is compiled to CommonJS: its namespace's
  // `default` is `module.exports`, which holds the module's own `default` export.
  const exported = loaded.default
  const { agentDefinitionOf, withDefaultName } = await agentDefinition()
  const candidate = agentDefinitionOf(loaded)
  if (!candidate) {
    throw agentError(
      'AGENT_INVALID_MODULE',
      `${location.file} does not default-export an agent definition (got ${exported === undefined ? 'no default export' : typeof exported})`,
      'end the module with `export default defineAgent({ driver, capabilities })`',
      { file: location.file },
    )
  }
  const named = withDefaultName(candidate, location.name, location.file)
  // The agent directory's memory/ folder is part of the agent.
  const agent = (await memoryFolder()).withMemoryFolder(named, location.file)
  trackLoadedAgent(agent)
  return { agent, location }
}

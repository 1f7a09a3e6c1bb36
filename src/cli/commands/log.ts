/**
 * `agent memory verify` and `agent memory compact` (the chain, verification, compaction and
 * erasure of docs/log-format.md): check or rewrite a workspace memory log without loading an
 * agent; `verify --agent` checks the stores of one agent of the app instead (its JSONL logs, and
 * the event tables of its SQLite and Postgres stores).
 */
import { join, resolve } from 'node:path'
import { defineCommand } from 'citty'
import { consola } from 'consola'
import { agentError, toErrorShape } from '../../errors.ts'
import { DEFAULT_MEMORY_LOG_PATH, DEFAULT_WORKSPACE_DIR } from '../../workspace/defaults.ts'
import { formatError } from '../format.ts'

// Loaded when a command runs, so `agent --help` loads none of them.
const eventLog = () => import('../../memory/event-log.ts')
const jsonlStore = () => import('../../memory/stores/workspace-jsonl.ts')
const workspaceModule = () => import('../../workspace/workspace.ts')
const loadAgentModule = () => import('../load-agent.ts')
const memorySchemas = () => import('../../memory/schemas.ts')

const logArgs = {
  dir: { type: 'string', description: `Workspace folder (default: ${DEFAULT_WORKSPACE_DIR})`, default: DEFAULT_WORKSPACE_DIR },
  path: { type: 'string', description: `Workspace-relative log path (default: ${DEFAULT_MEMORY_LOG_PATH})`, default: DEFAULT_MEMORY_LOG_PATH },
} as const

const verifyArgs = {
  // No citty defaults: a --dir or --path given beside --agent is an error, so it must be seen as given.
  dir: { type: 'string', description: `Workspace folder (default: ${DEFAULT_WORKSPACE_DIR}); not with --agent` },
  path: { type: 'string', description: `Workspace-relative log path (default: ${DEFAULT_MEMORY_LOG_PATH}); not with --agent` },
  agent: { type: 'string', description: 'Verify the memory stores of this agent (server/agents/<name>.ts) instead of one log file' },
  root: { type: 'string', description: 'With --agent: project root holding server/agents (default: cwd, or ./playground when cwd has playground/server/agents)' },
  store: { type: 'string', description: 'With --agent: only this memory store (default: every store of the agent)' },
} as const

/**
 * The workspace and log path the command acts on; a log that does not exist is an error
 * (`MEMORY_LOG_NOT_FOUND`), never "0 lines verify".
 */
async function existingLog(args: { dir?: string; path?: string }, writable: boolean) {
  const path = (await jsonlStore()).checkLogPath(args.path ?? DEFAULT_MEMORY_LOG_PATH)
  const dir = resolve(args.dir ?? DEFAULT_WORKSPACE_DIR)
  const workspace = (await workspaceModule()).createWorkspace({ dir, writable })
  if (!(await workspace.has(path))) {
    throw agentError('MEMORY_LOG_NOT_FOUND', `there is no memory log at ${join(dir, path)}`, 'pass --dir with the agent\'s workspace folder (the playground\'s is playground/.agent/workspace) and --path when the store sets one', { dir, path })
  }
  return { workspace, path }
}

/** Codes of a compaction refused on the log's state (exit 1); any other error is a read or argument error (exit 2). */
const COMPACTION_REFUSALS = new Set(['MEMORY_LOG_CORRUPT', 'MEMORY_LOG_BUSY'])

function print(text: string): void {
  process.stdout.write(`${text}\n`)
}

/** What verifying one store of an agent found: its verification, or why it could not be verified. */
type StoreVerification =
  | { store: string; kind: string; where: string; result: MemoryLogVerification }
  | { store: string; kind: string; where: string; missing: true }
  | { store: string; kind: string; error: unknown }
  | { store: string; kind: string; where: string; readOnly: true }

type MemoryLogVerification = Awaited<ReturnType<Awaited<ReturnType<typeof eventLog>>['verifyLog']>>

/** A store factory that can check its own events (the SQLite and Postgres stores: their event table, as `verifyLog` checks a JSONL log). */
interface VerifiableFactory {
  kind: string
  verify(): Promise<MemoryLogVerification>
  close?(): Promise<void>
}

function isVerifiable(factory: unknown): factory is VerifiableFactory {
  return typeof factory === 'object' && factory !== null && typeof (factory as { verify?: unknown }).verify === 'function'
}

/**
 * Verifies every memory store of agent `name` (or only `store`): a workspace JSONL store's log in
 * the agent's workspace (`verifyLog`), a store whose factory has `verify()` (SQLite, Postgres:
 * every event row's `seq`, `prev`, digests and effect, as `verifyLog` checks a JSONL log; the
 * record columns, a cache of the fold, are not compared with the lines). Any other store (in
 * memory, an adapter object of your own) keeps no log this command can check:
 * `MEMORY_VERIFY_UNSUPPORTED`. The stores of the agent directory's `memory/` files (read-only,
 * rebuilt from each file at every run) are listed as read-only, with nothing to verify.
 *
 * @throws AgentError `AGENT_NOT_FOUND` / `AGENT_INVALID_MODULE`, `MEMORY_NOT_CONFIGURED`, `MEMORY_STORE_UNKNOWN`.
 */
export async function verifyAgentStores(options: { agent: string; root?: string; store?: string }): Promise<StoreVerification[]> {
  const { loadAgent, resolveRoot } = await loadAgentModule()
  const root = resolveRoot(options.root)
  // As the other agent commands: relative paths in the agent module resolve against the project root.
  process.chdir(root)
  const { agent } = await loadAgent(root, options.agent)
  const capability = agent.capabilities.find(item => item.id === 'memory' && 'options' in item) as { options: unknown } | undefined
  // The agent directory's memory/ files: read-only stores rebuilt in memory from each file at every run.
  const folderFiles = agent.capabilities.flatMap(item => item.id === 'memory-folder' && typeof (item as { files?: unknown }).files === 'function' ? (item as unknown as { files(): Array<{ store: string; file: string }> }).files() : [])
  if (!capability && folderFiles.length === 0) throw agentError('MEMORY_NOT_CONFIGURED', `agent "${agent.name}" has no memory() capability`, 'pass --agent with an agent that has memory() among its capabilities')
  const configs = capability ? (await memorySchemas()).parseMemoryOptions(capability.options) : []
  const chosen = options.store === undefined ? configs : configs.filter(config => config.name === options.store)
  const chosenFiles = options.store === undefined ? folderFiles : folderFiles.filter(file => file.store === options.store)
  if (chosen.length === 0 && chosenFiles.length === 0) {
    const names = [...configs.map(config => config.name), ...folderFiles.map(file => file.store)]
    throw agentError('MEMORY_STORE_UNKNOWN', `agent "${agent.name}" has no memory store named "${options.store}" (stores: ${names.join(', ')})`, `pass --store ${names.join(' | ')}, or leave --store out to verify every store`, { store: options.store, available: names })
  }
  const results: StoreVerification[] = []
  for (const config of chosen) {
    const factory = config.adapter as unknown
    const kind = typeof factory === 'object' && factory !== null && typeof (factory as { kind?: unknown }).kind === 'string' ? (factory as { kind: string }).kind : 'adapter object'
    try {
      if (kind === 'workspace-jsonl') {
        const { path, key } = factory as { path: string; key: string }
        if (!agent.workspace) throw agentError('MEMORY_WORKSPACE_REQUIRED', `the memory store "${config.name}" keeps its log in the agent workspace, and agent "${agent.name}" has none`, 'give the agent a workspace: createWorkspace()', { store: config.name })
        if (!(await agent.workspace.has(key))) {
          results.push({ store: config.name, kind, where: path, missing: true })
          continue
        }
        results.push({ store: config.name, kind, where: path, result: await (await eventLog()).verifyLog(agent.workspace, key) })
      }
      else if (isVerifiable(factory)) {
        try {
          results.push({ store: config.name, kind, where: `${kind} event table`, result: await factory.verify() })
        }
        finally {
          await factory.close?.().catch(() => undefined)
        }
      }
      else {
        throw agentError('MEMORY_VERIFY_UNSUPPORTED', `the memory store "${config.name}" (${kind}) keeps no log that verify can check: it checks workspace JSONL logs and stores whose factory has verify() (SQLite, Postgres)`, options.store === undefined ? 'pass --store with another store of the agent, or check this backend with its own tools' : 'check this backend with its own tools', { store: config.name, kind })
      }
    }
    catch (error) {
      results.push({ store: config.name, kind, error })
    }
  }
  for (const file of chosenFiles) results.push({ store: file.store, kind: 'memory-folder', where: file.file, readOnly: true })
  return results
}

/** Prints the verification of each store; returns the exit code: 1 when a store has a bad line, else 2 when one could not be verified, else 0. */
function reportStores(results: readonly StoreVerification[]): number {
  let bad = false
  let failed = false
  for (const item of results) {
    const name = `store "${item.store}" (${item.kind})`
    if ('error' in item) {
      consola.error(`${name}: ${formatError(toErrorShape(item.error))}`)
      failed = true
    }
    else if ('readOnly' in item) print(`skip: ${name}: read-only file ${item.where} of the agent directory; its records are rebuilt from the file at each run and keep no log to verify (the file is the source: check it in version control)`)
    else if ('missing' in item) print(`ok: ${name}: no log yet at ${item.where} (nothing written)`)
    else if (item.result.ok) print(`ok: ${name}: ${item.result.lines} ${item.result.lines === 1 ? 'line' : 'lines'} verify in ${item.where}${item.result.torn ? ` (torn tail of ${item.result.torn.bytes} bytes from line ${item.result.torn.line}, moved aside at the next write)` : ''}`)
    else {
      print(`BAD: ${name}: line ${item.result.firstBad!.line} of ${item.where}: ${item.result.firstBad!.reason} (${item.result.lines} lines)`)
      bad = true
    }
  }
  return bad ? 1 : failed ? 2 : 0
}

/**
 * `agent memory verify [--dir D] [--path P]`: recomputes every digest and the chain. Prints
 * `ok: N lines` (plus a torn tail if any) and exits 0, or prints the first bad line with its
 * number and reason and exits 1 (exit 2 for a read or argument error). `agent memory verify
 * --agent A [--store S] [--root R]`: the same for every store of agent `A` (or only `S`), one line
 * per store ({@link verifyAgentStores}); exit 1 when a store has a bad line, else 2 when one could
 * not be verified (`MEMORY_VERIFY_UNSUPPORTED`, a read error).
 */
export const verifyCommand = defineCommand({
  meta: { name: 'verify', description: 'Check every digest and the chain of a memory log, or of every store of an agent (--agent); exit 1 at the first bad line' },
  args: verifyArgs,
  run: async ({ args }) => {
    try {
      if (args.agent !== undefined) {
        if (args.dir !== undefined || args.path !== undefined) {
          throw agentError('CLI_INVALID_OPTION', `--${args.dir !== undefined ? 'dir' : 'path'} names one log file, and --agent verifies the stores the agent configures`, 'pass either --agent (with --store for one store) or --dir and --path', { option: args.dir !== undefined ? 'dir' : 'path' })
        }
        process.exitCode = reportStores(await verifyAgentStores({ agent: args.agent, ...(args.root !== undefined ? { root: args.root } : {}), ...(args.store !== undefined ? { store: args.store } : {}) }))
        return
      }
      if (args.root !== undefined || args.store !== undefined) {
        throw agentError('CLI_INVALID_OPTION', `--${args.root !== undefined ? 'root' : 'store'} needs --agent`, 'pass --agent <name>, or --dir and --path for one log file', { option: args.root !== undefined ? 'root' : 'store' })
      }
      const { workspace, path } = await existingLog(args, false)
      const result = await (await eventLog()).verifyLog(workspace, path)
      if (result.ok) {
        print(`ok: ${result.lines} ${result.lines === 1 ? 'line' : 'lines'} verify in ${path}${result.torn ? ` (torn tail of ${result.torn.bytes} bytes from line ${result.torn.line}, moved aside at the next write)` : ''}`)
        return
      }
      print(`BAD: line ${result.firstBad!.line} of ${path}: ${result.firstBad!.reason} (${result.lines} lines)`)
      process.exitCode = 1
    }
    catch (error) {
      consola.error(formatError(toErrorShape(error)))
      process.exitCode = 2
    }
    finally {
      if (args.agent !== undefined) await (await import('../release-agent.ts')).releaseLoadedAgents()
    }
  },
})

/**
 * `agent memory compact [--dir D] [--path P]`: rewrites the log atomically (erased payloads
 * removed, torn tail dropped, chain kept). Exits 1 when the log does not verify (nothing written)
 * or other writers kept it busy, 2 on a read or argument error (a missing log, a bad `--path`),
 * as `agent memory verify` does.
 */
export const compactCommand = defineCommand({
  meta: { name: 'compact', description: 'Rewrite a memory log atomically: remove erased payloads, keep the chain' },
  args: logArgs,
  run: async ({ args }) => {
    try {
      const { workspace, path } = await existingLog(args, true)
      const result = await (await eventLog()).compactLog(workspace, path)
      print(`compacted ${path}: ${result.lines} lines, ${result.bytesBefore} -> ${result.bytesAfter} bytes, ${result.erasedLines} erased payloads removed${result.rechained ? ', version 1 lines rewritten as version 2' : ''}`)
    }
    catch (error) {
      const shape = toErrorShape(error)
      consola.error(formatError(shape))
      process.exitCode = COMPACTION_REFUSALS.has(shape.code) ? 1 : 2
    }
  },
})

#!/usr/bin/env node
/**
 * The `agent` command: `agent dev` (terminal chat), `agent info`, `agent memory
 * import|export|list|search|verify|compact` and `agent mcp`. See docs/cli.md. In this repository
 * run it with `npx tsx src/cli/main.ts <command>`.
 */
import { readFile } from 'node:fs/promises'
import { basename, resolve as resolvePath } from 'node:path'
import { stripVTControlCharacters } from 'node:util'
import { defineCommand, renderUsage, runCommand, runMain } from 'citty'
import type { ArgsDef, CommandDef } from 'citty'
import { consola } from 'consola'
import { agentError, toErrorShape } from '../errors.ts'
import { formatError } from './format.ts'
import { loadAgent, resolveRoot } from './load-agent.ts'
import { releaseLoadedAgents } from './release-agent.ts'
import { compactCommand, verifyCommand } from './commands/log.ts'
import { mcpCommand } from './commands/mcp.ts'
import { studioCommand } from './commands/studio.ts'
import { embedAfterImport, eraseCommand, exportCommand, withFileImport } from './commands/transfer.ts'
import { commandErrorOf, namedCommand, rejectEmptyOptions, rejectUnknownOptions, type CommandNode } from './options.ts'

// Loaded when a command runs, so `agent --help` loads none of them.
const chat = () => import('./chat.ts')
const infoModule = () => import('./info.ts')
const locomo = () => import('./import-locomo.ts')
const openStore = () => import('../memory/open-store.ts')
const memoryCapability = () => import('../memory/capability.ts')
const hybrid = () => import('../memory/hybrid-search.ts')
const devUrl = () => import('./commands/dev-url.ts')
const embedWatch = () => import('./embed-watch.ts')

/** Default user id of CLI invocations (`--user`). */
export const DEFAULT_CLI_USER = 'demo'

const agentArgs = {
  agent: { type: 'string', description: 'Agent name: server/agents/<name>.ts or server/agents/<name>/agent.ts', required: true },
  root: { type: 'string', description: 'Project root holding server/agents (default: cwd, or ./playground when cwd has playground/server/agents)' },
} as const

const userArg = { type: 'string', description: 'User id the agent runs for', default: DEFAULT_CLI_USER } as const
const storeArg = { type: 'string', description: 'Memory store name (default: the only store, or the store named "agent")' } as const
const tenantArg = { type: 'string', description: 'Tenant of the user, for agents whose scopes name one (default: none)' } as const

/** The user of `--user` and `--tenant`, as an invocation's `user`. */
function userOf(args: { user: string; tenant?: string }): { id: string; tenant?: string } {
  return { id: args.user, ...(args.tenant ? { tenant: args.tenant } : {}) }
}

/**
 * Runs a command body; an error is printed as `CODE: why. Fix: fix` and sets exit code 1 instead
 * of a stack trace. Then the connections its agents opened are closed, so the process exits.
 */
async function guarded(task: () => Promise<void>): Promise<void> {
  try {
    await task()
  } catch (error) {
    consola.error(formatError(toErrorShape(error)))
    process.exitCode = 1
  } finally {
    await releaseLoadedAgents()
  }
}

/**
 * Resolves the project root, makes it the working directory (so relative paths in agent modules,
 * such as the default `createWorkspace()` folder, resolve against the project root as they do
 * under Vite), rejects flags the command does not define, and loads the agent.
 */
async function loadProjectAgent(args: { root?: string; agent: string; _?: string[] } & Record<string, unknown>, known: Record<string, unknown>) {
  rejectUnknownOptions(args, known)
  const root = resolveRoot(args.root)
  process.chdir(root)
  return loadAgent(root, args.agent)
}

function print(text: string): void {
  process.stdout.write(`${text}\n`)
}

const dev = defineCommand({
  meta: { name: 'dev', description: 'Chat with an agent in the terminal (reads lines from stdin; /exit to quit)' },
  args: {
    ...agentArgs,
    user: userArg,
    tenant: tenantArg,
    thread: { type: 'string', description: 'Thread id to continue (default: a new thread)' },
    verbose: { type: 'boolean', description: 'Print tool inputs and results in full', default: false },
    url: { type: 'string', description: 'Drive a running dev server (for example http://localhost:5173) instead of loading the agent in-process' },
    token: { type: 'string', description: 'With --url: bearer token for a production handler' },
  },
  run: ({ args, cmd }) => guarded(async () => {
    if (args.url) {
      rejectUnknownOptions(args, cmd.args as Record<string, unknown>)
      // The server's identify hook decides the tenant (a dev server: none; a production handler: the token's).
      if (args.tenant !== undefined) throw agentError('CLI_INVALID_OPTION', '--tenant names the tenant of an agent run in this process, and --url drives a server whose identify hook decides the tenant', 'leave --tenant out with --url (a production handler takes the tenant from the --token), or drop --url to run the agent here', { option: 'tenant' })
      // With --token the server takes the user from the token, and --user is not used.
      consola.info(`Chatting with ${args.agent} at ${(await devUrl()).routesBase(args.url)} as ${args.token ? 'the user of --token' : args.user}. Type /exit to quit.`)
      const { unreachable } = await (await devUrl()).runRemoteChat({ url: args.url, agent: args.agent, user: args.user, ...(args.token ? { token: args.token } : {}), ...(args.thread ? { threadId: args.thread } : {}), input: process.stdin, output: process.stdout, interactive: process.stdin.isTTY === true, ...(args.verbose ? { jsonLimit: 0 } : {}) })
      if (unreachable) process.exitCode = 1
      return
    }
    const { agent } = await loadProjectAgent(args, cmd.args as Record<string, unknown>)
    const interactive = process.stdin.isTTY === true
    consola.info(`Chatting with ${agent.name} (${(await infoModule()).describeDriver(agent.driver)}) as ${args.user}${args.tenant ? ` of tenant ${args.tenant}` : ''}. Type /exit to quit, /approvals to list pending approvals.`)
    await (await chat()).runChat({
      agent,
      user: userOf(args),
      threadId: args.thread,
      input: process.stdin,
      output: process.stdout,
      interactive,
      approver: args.user,
      jsonLimit: args.verbose ? 0 : undefined,
    })
  }),
})

const info = defineCommand({
  meta: { name: 'info', description: 'Print an agent\'s driver, capabilities and static tools' },
  args: agentArgs,
  run: ({ args, cmd }) => guarded(async () => {
    const { agent, location } = await loadProjectAgent(args, cmd.args as Record<string, unknown>)
    for (const text of (await infoModule()).describeAgent(agent, location.file)) print(text)
  }),
})

const importCommand = defineCommand({
  meta: { name: 'import', description: 'Import the observations of a LoCoMo conversation, one memory scope per speaker (or per conversation)' },
  args: {
    ...agentArgs,
    locomo: { type: 'string', description: 'Path of a LoCoMo conversation JSON file', required: true },
    store: storeArg,
    tenant: tenantArg,
    scope: { type: 'string', description: "'speaker' (default): one scope per speaker, user = the speaker; 'conversation': one scope for the conversation, user = the file's name without .json (the retrieval protocol)", default: 'speaker' },
  },
  run: ({ args, cmd }) => guarded(async () => {
    // Resolved before the working directory moves to the project root.
    const file = resolvePath(args.locomo)
    const { agent } = await loadProjectAgent(args, cmd.args as Record<string, unknown>)
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch (error) {
      const missing = (error as NodeJS.ErrnoException).code === 'ENOENT'
      throw agentError('LOCOMO_UNREADABLE', missing ? `there is no file ${file}` : `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`, 'pass the path of a LoCoMo conversation file (relative to the folder you run the command in), for example conv-26.json from the LoCoMo data', { file }, error)
    }
    let data: unknown
    try {
      data = JSON.parse(text)
    } catch (error) {
      throw agentError('LOCOMO_UNREADABLE', `${file} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`, 'pass an unmodified LoCoMo conversation file', { file }, error)
    }
    if (args.scope !== 'speaker' && args.scope !== 'conversation') {
      throw agentError('CLI_INVALID_SCOPE', `--scope is ${JSON.stringify(args.scope)}, not 'speaker' or 'conversation'`, "pass --scope speaker (one scope per speaker, the default) or --scope conversation (one scope for the whole conversation)", { scope: args.scope })
    }
    const observations = (await locomo()).parseLocomoConversation(data, args.locomo)
    const groups = args.scope === 'conversation' ? new Map([[basename(file).replace(/\.json$/i, ''), observations]]) : (await locomo()).groupBySpeaker(observations)
    let added = 0
    let skipped = 0
    for (const [speaker, group] of groups) {
      const { adapter, target } = await (await openStore()).openMemoryStore(agent, { user: { id: speaker, ...(args.tenant ? { tenant: args.tenant } : {}) }, store: args.store })
      const counts = await (await locomo()).importRecords(adapter, target, group.map(observation => observation.record), { agent: agent.name, user: speaker, via: 'import' })
      print(`${speaker}: ${counts.added} added, ${counts.skipped} already present (store ${target.store}, scope ${JSON.stringify(target.scope)})`)
      const embedded = await embedAfterImport(agent, target.store, adapter, target)
      if (embedded) print(`${speaker}: ${embedded}`)
      added += counts.added
      skipped += counts.skipped
    }
    print(`imported ${added} of ${observations.length} observations (${skipped} already present)`)
  }),
})

const list = defineCommand({
  meta: { name: 'list', description: 'List the records of a user\'s memory scope (all statuses, creation order)' },
  args: { ...agentArgs, user: userArg, tenant: tenantArg, store: storeArg },
  run: ({ args, cmd }) => guarded(async () => {
    const { agent } = await loadProjectAgent(args, cmd.args as Record<string, unknown>)
    const { adapter, target } = await (await openStore()).openMemoryStore(agent, { user: userOf(args), store: args.store })
    const records = await adapter.export(target)
    for (const record of records) print(`${record.id}  ${record.status}  ${record.kind}  ${record.createdAt}  ${record.content}`)
    print(`${records.length} ${records.length === 1 ? 'record' : 'records'} in store ${target.store}, scope ${JSON.stringify(target.scope)}`)
  }),
})

const search = defineCommand({
  meta: { name: 'search', description: 'Search a user\'s memory scope the way memory_search does' },
  args: {
    ...agentArgs,
    user: userArg,
    tenant: tenantArg,
    store: storeArg,
    query: { type: 'positional', description: 'Search text (several words unquoted are one query)', required: true },
    limit: { type: 'string', description: 'Most results (default 10)' },
  },
  run: ({ args, cmd }) => guarded(async () => {
    const { agent } = await loadProjectAgent(args, cmd.args as Record<string, unknown>)
    const { adapter, target } = await (await openStore()).openMemoryStore(agent, { user: userOf(args), store: args.store })
    const limit = args.limit === undefined ? undefined : Number(args.limit)
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) throw agentError('CLI_INVALID_LIMIT', `--limit ${args.limit} is not a positive integer`, 'pass --limit 1 or more')
    // `agent memory search window seats` means the query "window seats", as the quoted form does.
    const words = args._.length > 0 ? args._.join(' ') : args.query
    const query = { query: words, ...(limit === undefined ? {} : { limit }) }
    // As memory_search: hybrid (full text fused with vectors) when the store has `embed`.
    const config = (await memoryCapability()).memoryStoreConfigOf(agent, target.store)
    const embedder = config.embed && config.searchMode !== 'substring' ? (await embedWatch()).watchEmbedder(config.embed) : undefined
    const hits = embedder
      ? await (await hybrid()).hybridSearch(adapter, target, query, { ...config.fusion, model: embedder.model })
      : await adapter.search(target, { ...query, ...(config.searchMode === 'substring' ? { mode: 'substring' as const } : {}) })
    // Hybrid search falls back to the full-text results when the embedder fails: say so, with its error.
    const failure = embedder?.failure()
    if (failure !== undefined) consola.warn(`full-text results only: the store's embedder failed (${formatError(toErrorShape(failure))})`)
    for (const hit of hits) print(`${hit.record.id}  score ${hit.score}  ${hit.record.content}`)
    print(`${hits.length} ${hits.length === 1 ? 'result' : 'results'} in store ${target.store}, scope ${JSON.stringify(target.scope)}`)
  }),
})

const memorySubCommands = { import: withFileImport(importCommand), export: exportCommand, erase: eraseCommand, list, search, verify: verifyCommand, compact: compactCommand }

const memoryCommand = defineCommand({
  meta: { name: 'memory', description: `Work with an agent's memory stores: ${Object.keys(memorySubCommands).join(', ')}` },
  subCommands: memorySubCommands,
})

/**
 * Help text of a command: citty's usage without colour codes unless stdout is a terminal that
 * takes them (`NO_COLOR` and `TERM=dumb` switch them off too).
 */
export async function usageText(cmd: CommandDef<ArgsDef>, parent?: CommandDef<ArgsDef>): Promise<string> {
  const text = await renderUsage(cmd, parent)
  const colour = process.stdout.isTTY === true && !process.env.NO_COLOR && process.env.TERM !== 'dumb'
  return colour ? text : stripVTControlCharacters(text)
}

/**
 * Prepares the command tree for help and strict flags: a description's own "(default: X)" is
 * dropped where citty prints "(Default: X)" for the same value, and every command that runs
 * rejects flags it does not define (`CLI_UNKNOWN_OPTION`) and string flags given an empty value
 * (`CLI_INVALID_OPTION`) before it runs (exit code `exitCode`: 2 for the log commands, whose
 * argument errors exit 2, else 1).
 */
function tidy(cmd: CommandDef<ArgsDef>, exitCode = 1): CommandDef<ArgsDef> {
  const args = cmd.args as Record<string, { description?: string; default?: unknown }> | undefined
  for (const spec of Object.values(args ?? {})) {
    if (spec.default !== undefined && spec.description) spec.description = spec.description.replace(` (default: ${String(spec.default)})`, '')
  }
  const subCommands = cmd.subCommands as Record<string, CommandDef<ArgsDef>> | undefined
  for (const [name, sub] of Object.entries(subCommands ?? {})) tidy(sub, name === 'verify' || name === 'compact' ? 2 : 1)
  const run = cmd.run
  if (run && !subCommands) {
    cmd.run = async (context) => {
      try {
        rejectUnknownOptions(context.args as Record<string, unknown>, (args ?? {}) as Record<string, unknown>)
        rejectEmptyOptions(context.args as Record<string, unknown>, (args ?? {}) as Record<string, unknown>)
      } catch (error) {
        consola.error(formatError(toErrorShape(error)))
        process.exitCode = exitCode
        return
      }
      return run(context)
    }
  }
  return cmd
}

/** The `agent` command tree. `agent` alone prints the help and exits 0. */
const main = tidy(defineCommand({
  meta: { name: 'agent', version: '0.1.0', description: 'Run and inspect vite-agent-memory agents' },
  subCommands: { dev, info, memory: memoryCommand, mcp: mcpCommand, studio: studioCommand },
  // citty runs a parent's `run` after its subcommand too: print the help only when none was named.
  run: async ({ rawArgs }) => {
    if (rawArgs.some(arg => !arg.startsWith('-'))) return
    print(await usageText(main as CommandDef<ArgsDef>))
  },
}) as CommandDef<ArgsDef>)

// Output piped into `head` and the like: stop quietly when the reader goes away.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(0)
  throw error
})

const showUsage = async (cmd: CommandDef<ArgsDef>, parent?: CommandDef<ArgsDef>) => print(await usageText(cmd, parent))
const rawArgs = process.argv.slice(2)
if (rawArgs.some(arg => arg === '--help' || arg === '-h') || (rawArgs.length === 1 && (rawArgs[0] === '--version' || rawArgs[0] === '-v'))) {
  await runMain(main, { rawArgs, showUsage: async (cmd, parent) => showUsage(cmd as CommandDef<ArgsDef>, parent as CommandDef<ArgsDef> | undefined) })
}
else {
  // citty's own argument errors (a missing --agent, an unknown command) print as `CODE: why. Fix: ...`
  // after the command's help, without colour into a pipe, like every other error of the CLI.
  try {
    await runCommand(main, { rawArgs })
  }
  catch (error) {
    const coded = commandErrorOf(error, main as CommandNode, rawArgs)
    if (coded === error) throw error
    const { node, words } = namedCommand(main as CommandNode, rawArgs)
    const parent = namedCommand(main as CommandNode, words.slice(1, -1)).node
    await showUsage(node as CommandDef<ArgsDef>, words.length > 1 ? parent as CommandDef<ArgsDef> : undefined)
    consola.error(formatError(toErrorShape(coded)))
    process.exitCode = words[1] === 'memory' && (words[2] === 'verify' || words[2] === 'compact') ? 2 : 1
  }
}

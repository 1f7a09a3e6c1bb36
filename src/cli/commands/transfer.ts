/**
 * `agent memory export` and `agent memory import --file` (`retention.export`): a
 * portable JSON file of one user's memory scope, and taking it back. The `import` subcommand
 * keeps `--locomo` (LoCoMo conversations, see `../import-locomo.ts`) and adds `--file`.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { dirname, resolve as resolvePath } from 'node:path'
import { defineCommand, type CommandDef } from 'citty'
import { consola } from 'consola'
import { agentError, toErrorShape } from '../../errors.ts'
import type { MemoryErasureReport } from '../../memory/retention.ts'
import type { AgentDefinition } from '../../agent/types.ts'
import type { MemoryStoreAdapter, MemoryTarget } from '../../memory/types.ts'
import { formatError } from '../format.ts'
import { loadAgent, resolveRoot } from '../load-agent.ts'
import { releaseLoadedAgents } from '../release-agent.ts'
import { rejectUnknownOptions as rejectUnknown } from '../options.ts'

// Loaded when a command runs, so `agent --help` loads none of them.
const memoryCapability = () => import('../../memory/capability.ts')
const openStore = () => import('../../memory/open-store.ts')
const retention = () => import('../../memory/retention.ts')
const embeddings = () => import('../../memory/embeddings.ts')

const DEFAULT_USER = 'demo'

const commonArgs = {
  agent: { type: 'string', description: 'Agent name: server/agents/<name>.ts or server/agents/<name>/agent.ts', required: true },
  root: { type: 'string', description: 'Project root holding server/agents (default: cwd, or ./playground when cwd has playground/server/agents)' },
  user: { type: 'string', description: `User id whose scope is exported, imported or erased (default: ${DEFAULT_USER})`, default: DEFAULT_USER },
  store: { type: 'string', description: 'Memory store name (default: the only store, or the store named "agent")' },
  tenant: { type: 'string', description: 'Tenant of the user, for agents whose scopes name one (default: none)' },
} as const

function print(text: string): void {
  process.stdout.write(`${text}\n`)
}

/** Runs a command body, printing an error as `CODE: why. Fix: fix` (exit code 1), then closes the connections its agent opened. */
async function guarded(task: () => Promise<void>): Promise<void> {
  try {
    await task()
  }
  catch (error) {
    consola.error(formatError(toErrorShape(error)))
    process.exitCode = 1
  }
  finally {
    await releaseLoadedAgents()
  }
}

async function openScope(args: { agent: string; root?: string; user: string; store?: string; tenant?: string }) {
  const root = resolveRoot(args.root)
  process.chdir(root)
  const { agent } = await loadAgent(root, args.agent)
  const opened = await (await openStore()).openMemoryStore(agent, { user: { id: args.user, ...(args.tenant ? { tenant: args.tenant } : {}) }, ...(args.store ? { store: args.store } : {}) })
  return { agent, opened, config: (await memoryCapability()).memoryStoreConfigOf(agent, opened.store) }
}

/**
 * `agent memory export --agent A [--user U] [--store S] [--out FILE]`: writes the user's scope of
 * the store as a `MemoryScopeExport` JSON file (stdout without `--out`). Fails with
 * `MEMORY_EXPORT_DISABLED` when the store sets `retention.export: false`.
 */
export const exportCommand = defineCommand({
  meta: { name: 'export', description: 'Write a user\'s memory scope to a portable JSON file (every record, any status)' },
  args: { ...commonArgs, out: { type: 'string', description: 'File to write (default: stdout)' } },
  run: ({ args, cmd }) => guarded(async () => {
    rejectUnknown(args, cmd.args as Record<string, unknown>)
    // Resolved before the working directory moves to the project root.
    const out = args.out === undefined ? undefined : resolvePath(args.out)
    const { agent, opened, config } = await openScope(args)
    if (config.retention?.export === false) {
      throw agentError('MEMORY_EXPORT_DISABLED', `memory store "${opened.store}" has retention.export set to false`, 'enable export in the store options (retention.export) to export its scopes', { store: opened.store })
    }
    const data = await (await retention()).exportMemoryScope(opened.adapter, opened.target, { agent: agent.name })
    const text = `${JSON.stringify(data, null, 2)}\n`
    if (out === undefined) {
      process.stdout.write(text)
      return
    }
    try {
      await writeFile(out, text, 'utf8')
    }
    catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      const why = code === 'ENOENT' ? `the folder ${dirname(out)} does not exist` : code === 'EISDIR' ? `${out} is a folder` : error instanceof Error ? error.message : String(error)
      throw agentError('MEMORY_EXPORT_UNWRITABLE', `cannot write the export to ${out}: ${why}`, 'pass --out a file path in an existing folder you can write to, or leave --out out to print the export on stdout', { file: out }, error)
    }
    print(`exported ${data.records.length} ${data.records.length === 1 ? 'record' : 'records'} of store ${opened.store}, scope ${JSON.stringify(opened.target.scope)} to ${out}`)
  }),
})

/**
 * After an import into a store with `embed` (vectors are computed at write, in batches):
 * embeds the scope's records that have no stored vector yet, in batches, and returns the line to
 * print. An embedder failure is a warning line, never a failed import: the next search embeds them.
 */
export async function embedAfterImport(agent: AgentDefinition, store: string, adapter: MemoryStoreAdapter, target: MemoryTarget): Promise<string | undefined> {
  const model = (await memoryCapability()).memoryStoreConfigOf(agent, store).embed
  if (!model) return undefined
  try {
    const { embedded } = await (await embeddings()).embedMemoryScope(adapter, target, model)
    return `embedded ${embedded} ${embedded === 1 ? 'record' : 'records'} for semantic search`
  }
  catch (error) {
    return `warning: the records are imported, but their vectors could not be computed (${error instanceof Error ? error.message : String(error)}); the first search computes them`
  }
}

/** The lines `agent memory erase` prints for a report: the count, then one line per copy rewritten, removed, denied or left. */
export function formatErasure(report: MemoryErasureReport, where: string): string[] {
  const lines = [`erased ${report.erased} ${report.erased === 1 ? 'record' : 'records'} of ${where}${report.ids.length ? `: ${report.ids.join(', ')}` : ''}`]
  for (const copy of report.copies.scrubbed) lines.push(`  scrubbed ${copy.key} (${copy.occurrences} ${copy.occurrences === 1 ? 'occurrence' : 'occurrences'})`)
  for (const key of report.copies.removed) lines.push(`  removed ${key}`)
  for (const id of report.copies.denied) lines.push(`  denied pending approval ${id} (its input held erased text)`)
  for (const key of report.copies.remaining) lines.push(`  still holds erased text, not changed (not the host's): ${key}`)
  for (const key of report.copies.kept) lines.push(`  kept ${key} (another owner's own text, not linked to the erased records)`)
  return lines
}

/**
 * `agent memory erase --agent A [--user U] [--store S] [--id R] --yes`: erases the user's whole
 * scope of the store (or the one record `--id`) from the log and every other copy of its text in
 * the workspace (approvals, transcripts, history, leftovers), and prints what was removed.
 * Without `--yes` nothing is changed (`CLI_CONFIRMATION_REQUIRED`).
 */
export const eraseCommand = defineCommand({
  meta: { name: 'erase', description: 'Erase a user\'s memory scope (or one record) and every copy of its text in the workspace' },
  args: { ...commonArgs, id: { type: 'string', description: 'Erase only this record (default: the whole scope)' }, yes: { type: 'boolean', description: 'Confirm the erasure (it cannot be undone)' } },
  run: ({ args, cmd }) => guarded(async () => {
    rejectUnknown(args, cmd.args as Record<string, unknown>)
    if (args.yes !== true) throw agentError('CLI_CONFIRMATION_REQUIRED', 'erasure cannot be undone, and --yes was not given', 'run the command again with --yes')
    const { agent, opened } = await openScope(args)
    const audit = { via: 'cli' as const, agent: agent.name, user: args.user }
    const options = { audit, ...(agent.workspace ? { workspace: agent.workspace } : {}) }
    const report = args.id !== undefined
      ? await (await retention()).hardDeleteMemoryRecord(opened.adapter, opened.target, args.id, options)
      : await (await retention()).eraseMemoryScope(opened.adapter, opened.target, options)
    const where = `store ${opened.store}, scope ${JSON.stringify(opened.target.scope)}`
    // An id that names nothing in this scope (another user's record, a typo) erased nothing: saying
    // "erased 0 records" with exit 0 would let an erasure request pass as done.
    if (args.id !== undefined && report.erased === 0) {
      throw agentError('MEMORY_RECORD_NOT_FOUND', `${where} has no record "${args.id}" to erase, so nothing was erased (it belongs to another user, tenant or store, was erased already, or is mistyped)`, 'check --user, --tenant and --store (`agent memory list --agent <name> --user <id>` lists a scope\'s ids); a record erased already needs nothing more', { id: args.id, store: opened.store, scope: opened.target.scope })
    }
    for (const line of formatErasure(report, where)) print(line)
  }),
})

/** The `--file` half of `agent memory import`: imports an export file into the user's scope. */
async function importFile(args: { agent: string; root?: string; user: string; store?: string; tenant?: string; file: string }): Promise<void> {
  const file = resolvePath(args.file)
  let text: string
  try {
    text = await readFile(file, 'utf8')
  }
  catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT') throw agentError('MEMORY_IMPORT_NOT_FOUND', `there is no file ${file}${args.file === file ? '' : ` (--file ${args.file}, relative to the folder the command runs in)`}`, 'check the path of --file: pass a file written by `agent memory export` (for example `agent memory export --agent <name> --out export.json`)', { file }, error)
    throw agentError('MEMORY_IMPORT_NOT_FOUND', `cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`, code === 'EISDIR' ? 'pass the path of a file, not a folder' : 'check that the file can be read by you', { file }, error)
  }
  let data: unknown
  try {
    data = JSON.parse(text)
  }
  catch (error) {
    throw agentError('MEMORY_IMPORT_INVALID', `${file} is not JSON: ${error instanceof Error ? error.message : String(error)}`, 'pass a file written by `agent memory export`', { file }, error)
  }
  const { agent, opened } = await openScope(args)
  const counts = await (await retention()).importMemoryScope(opened.adapter, opened.target, data, { audit: { via: 'import', agent: agent.name, user: args.user } })
  print(`imported ${counts.added} ${counts.added === 1 ? 'record' : 'records'} into store ${opened.store}, scope ${JSON.stringify(opened.target.scope)} (${counts.skipped} already present, ${counts.duplicates} duplicates, ${counts.renamed} renamed, ${counts.expired} expired by retention)`)
  const embedded = await embedAfterImport(agent, opened.store, opened.adapter, opened.target)
  if (embedded) print(embedded)
}

/**
 * Extends the `agent memory import` command: `--file F` imports an export file (this module);
 * `--locomo F` runs `locomo` (the LoCoMo import, unchanged). Exactly one of them is required.
 */
export function withFileImport(locomo: { args?: unknown; run?: (context: never) => unknown }): CommandDef {
  const locomoArgs = (locomo.args ?? {}) as Record<string, { type: string; description?: string; required?: boolean }>
  const args = {
    ...locomoArgs,
    ...(locomoArgs.locomo ? { locomo: { ...locomoArgs.locomo, required: false } } : {}),
    user: commonArgs.user,
    tenant: commonArgs.tenant,
    file: { type: 'string', description: 'Path of a JSON file written by `agent memory export`' },
  }
  return defineCommand({
    meta: { name: 'import', description: 'Import an export file (--file) into a user\'s scope, or the observations of a LoCoMo conversation (--locomo)' },
    args: args as never,
    run: (context) => {
      const values = context.args as unknown as Record<string, unknown> & { agent: string; root?: string; user: string; store?: string; tenant?: string; file?: string; locomo?: string }
      if (values.file !== undefined && values.locomo !== undefined) return guarded(async () => { throw agentError('CLI_INVALID_ARGUMENTS', 'pass either --file or --locomo, not both', 'run `agent memory import --file F` or `agent memory import --locomo F`') })
      if (values.file !== undefined) {
        return guarded(async () => {
          rejectUnknown(values, args)
          await importFile({ ...values, file: values.file! })
        })
      }
      if (values.locomo === undefined) return guarded(async () => { throw agentError('CLI_INVALID_ARGUMENTS', 'agent memory import needs --file or --locomo', 'pass --file <export.json> (from `agent memory export`) or --locomo <conversation.json>') })
      return locomo.run?.(context as never)
    },
  }) as CommandDef
}

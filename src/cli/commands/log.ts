/**
 * `agent memory verify` and `agent memory compact` (the chain, verification, compaction and
 * erasure of docs/log-format.md): check or rewrite a workspace memory log without loading an
 * agent.
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

const logArgs = {
  dir: { type: 'string', description: `Workspace folder (default: ${DEFAULT_WORKSPACE_DIR})`, default: DEFAULT_WORKSPACE_DIR },
  path: { type: 'string', description: `Workspace-relative log path (default: ${DEFAULT_MEMORY_LOG_PATH})`, default: DEFAULT_MEMORY_LOG_PATH },
} as const

/**
 * The workspace and log path the command acts on; a log that does not exist is an error
 * (`MEMORY_LOG_NOT_FOUND`), never "0 lines verify".
 */
async function existingLog(args: { dir: string; path: string }, writable: boolean) {
  const path = (await jsonlStore()).checkLogPath(args.path)
  const dir = resolve(args.dir)
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

/**
 * `agent memory verify [--dir D] [--path P]`: recomputes every digest and the chain. Prints
 * `ok: N lines` (plus a torn tail if any) and exits 0, or prints the first bad line with its
 * number and reason and exits 1 (exit 2 for a read or argument error).
 */
export const verifyCommand = defineCommand({
  meta: { name: 'verify', description: 'Check every digest and the chain of a memory log; exit 1 at the first bad line' },
  args: logArgs,
  run: async ({ args }) => {
    try {
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

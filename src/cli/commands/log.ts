/**
 * `agent memory verify` and `agent memory compact` (issue 3, "Chain and verification" and
 * "Compaction and erasure"): check or rewrite a workspace memory log without loading an agent.
 */
import { resolve } from 'node:path'
import { defineCommand } from 'citty'
import { consola } from 'consola'
import { toErrorShape } from '../../errors.ts'
import { compactLog, verifyLog } from '../../memory/log.ts'
import { checkLogPath, DEFAULT_MEMORY_LOG_PATH } from '../../memory/stores/workspace-jsonl.ts'
import { createWorkspace, DEFAULT_WORKSPACE_DIR } from '../../workspace/workspace.ts'
import { formatError } from '../format.ts'

const logArgs = {
  dir: { type: 'string', description: `Workspace folder (default: ${DEFAULT_WORKSPACE_DIR})`, default: DEFAULT_WORKSPACE_DIR },
  path: { type: 'string', description: `Workspace-relative log path (default: ${DEFAULT_MEMORY_LOG_PATH})`, default: DEFAULT_MEMORY_LOG_PATH },
} as const

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
      const path = checkLogPath(args.path)
      const result = await verifyLog(createWorkspace({ dir: resolve(args.dir), writable: false }), path)
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
 * removed, torn tail dropped, chain kept). Exits 1 when the log does not verify (nothing written).
 */
export const compactCommand = defineCommand({
  meta: { name: 'compact', description: 'Rewrite a memory log atomically: remove erased payloads, keep the chain' },
  args: logArgs,
  run: async ({ args }) => {
    try {
      const path = checkLogPath(args.path)
      const result = await compactLog(createWorkspace({ dir: resolve(args.dir) }), path)
      print(`compacted ${path}: ${result.lines} lines, ${result.bytesBefore} -> ${result.bytesAfter} bytes, ${result.erasedLines} erased payloads removed${result.rechained ? ', version 1 lines rewritten as version 2' : ''}`)
    }
    catch (error) {
      consola.error(formatError(toErrorShape(error)))
      process.exitCode = 1
    }
  },
})

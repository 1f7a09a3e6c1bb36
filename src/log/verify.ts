/**
 * Verification: the whole value read and every line checked (JSON, shape, `seq`, `prev`,
 * `digest`, `payloadDigest`, and each event's effect on the fold) without touching any open
 * log's state or the value. Versions 1 and 2 alike. Used by `agent memory verify`.
 */
import type { Workspace } from '../workspace/types.ts'
import { EMPTY, scratchHandle } from './handle.ts'
import { CorruptLine } from './line-check.ts'
import { scanBytes } from './replay.ts'
import type { LogEventDraft, LogFold, MemoryLogVerification } from './types.ts'
import { countNewlines } from './utf8.ts'

/**
 * Reads the whole log at `key` and checks every line with `fold`.
 *
 * @throws only read errors of the workspace (a missing value is an empty, valid log).
 */
export async function verifyEventLog<State, Draft extends LogEventDraft>(workspace: Workspace, key: string, fold: LogFold<State, Draft, unknown>): Promise<MemoryLogVerification> {
  const bytes = (await workspace.readBytes(key, 0)) ?? EMPTY
  const scratch = scratchHandle(fold, workspace, key, {})
  const lines = countNewlines(bytes)
  try {
    await scanBytes(scratch, bytes)
    return { ok: true, lines, ...(scratch.tail.length > 0 ? { torn: { line: scratch.lines + 1, bytes: scratch.tail.length } } : {}) }
  }
  catch (error) {
    if (error instanceof CorruptLine) return { ok: false, lines, firstBad: { line: error.line, reason: error.reason } }
    throw error
  }
}

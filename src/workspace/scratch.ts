/**
 * A private in-memory workspace holding one JSONL log: where `verifyLog` and the studio read a log
 * that is no workspace file (the events of a SQL store, as its factory's `exportLog()` writes
 * them). Nothing in it outlives the caller's reference.
 */
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import type { Workspace } from './types.ts'
import { createWorkspace } from './workspace.ts'

/** The key a scratch workspace holds its log at. */
export const SCRATCH_LOG_KEY = 'memory:memory.jsonl'

/** A new in-memory workspace whose {@link SCRATCH_LOG_KEY} holds `text` (absent when `text` is empty). */
export async function scratchLogWorkspace(text: string): Promise<Workspace> {
  const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
  if (text !== '') await workspace.append(SCRATCH_LOG_KEY, text)
  return workspace
}

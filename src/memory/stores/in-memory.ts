/**
 * `inMemoryMemoryStore()`: the same behaviour as the workspace JSONL store, without persistence.
 *
 * It runs the very same log engine and adapter over a private workspace on unstorage's memory
 * driver, so search, scopes, supersede and delete cannot drift apart between the two stores.
 */
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { createWorkspace } from '../../workspace/workspace.ts'
import { openMemoryLog } from '../event-log.ts'
import type { MemoryStoreFactory } from '../types.ts'
import { memoryLogAdapter, type MemoryLogStoreAdapter } from './workspace-jsonl.ts'

/** The factory {@link inMemoryMemoryStore} returns. */
export interface InMemoryMemoryStoreFactory extends MemoryStoreFactory {
  kind: 'in-memory'
}

/**
 * Creates an in-memory store factory. Records live as long as the factory object: every
 * `create()` (one per agent invocation) returns an adapter over the same records, and a new
 * `inMemoryMemoryStore()` starts empty. Needs no workspace; never throws on `create`.
 */
export function inMemoryMemoryStore(): InMemoryMemoryStoreFactory {
  let adapter: MemoryLogStoreAdapter | undefined
  return {
    kind: 'in-memory',
    create() {
      adapter ??= memoryLogAdapter(openMemoryLog(createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }), 'memory:memory.jsonl', { checkpointEvery: false }))
      return adapter
    },
  }
}

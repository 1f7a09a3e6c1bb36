/**
 * Where the studio and the inspector read a memory store's event log: a workspace JSONL store's
 * own file, or the event rows of a SQL store (SQLite, Postgres) as its factory's `exportLog()`
 * writes them (one canonical line per event, the same digests and chain), held in a scratch
 * workspace. A database store's log is read whole at each call (a studio page of it costs one
 * read of every event row); a store keeping neither (in-memory, a plain adapter) has no log.
 */
import type { AgentDefinition } from '../agent/types.ts'
import type { MemoryStoreConfig } from '../memory/schemas.ts'
import { scratchLogWorkspace, SCRATCH_LOG_KEY } from '../workspace/scratch.ts'
import type { Workspace } from '../workspace/types.ts'

/** A store's event log as a workspace key. */
export interface StoreLog {
  workspace: Workspace
  key: string
  /** What holds the log: the agent workspace's file at `key`, or a database's event table. */
  source: 'workspace' | 'event table'
}

function jsonlKey(agent: AgentDefinition, config: MemoryStoreConfig): string | undefined {
  const factory = config.adapter as { kind?: unknown; key?: unknown }
  return factory.kind === 'workspace-jsonl' && typeof factory.key === 'string' && agent.workspace ? factory.key : undefined
}

function logExporter(config: MemoryStoreConfig): (() => Promise<string>) | undefined {
  const factory = config.adapter as { exportLog?: unknown }
  return typeof factory.exportLog === 'function' ? () => (factory.exportLog as () => Promise<string>).call(factory) : undefined
}

/** Whether the store keeps an event log the studio can show and verify. */
export function keepsLog(agent: AgentDefinition, config: MemoryStoreConfig): boolean {
  return jsonlKey(agent, config) !== undefined || logExporter(config) !== undefined
}

/** The store's event log, brought up to date (a database's rows read now); `undefined` when it keeps none. */
export async function storeLog(agent: AgentDefinition, config: MemoryStoreConfig): Promise<StoreLog | undefined> {
  const key = jsonlKey(agent, config)
  if (key !== undefined) return { workspace: agent.workspace!, key, source: 'workspace' }
  const exportLog = logExporter(config)
  if (exportLog === undefined) return undefined
  return { workspace: await scratchLogWorkspace(await exportLog()), key: SCRATCH_LOG_KEY, source: 'event table' }
}

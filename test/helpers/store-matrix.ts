/**
 * One adapter factory per built-in store family, for tests that hold every store to the same
 * behaviour: in-memory, the JSONL workspace on the unstorage fs driver, SQLite, and Postgres
 * (DATABASE_URL; left out, with a skipped test saying why, when no server answers).
 * Call at the top level of a test file.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { afterAll, it } from 'vitest'
import { postgresMemoryStore } from '../../src/memory/stores/postgres.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import { sqliteMemoryStore } from '../../src/memory/stores/sqlite.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryStoreAdapter, MemoryStoreContext } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { postgresTestDatabases, POSTGRES_SKIP_HINT } from './postgres.ts'

/** A store family's name and a maker of a fresh, empty adapter of it. */
export type StoreUnderTest = [name: string, open: () => Promise<MemoryStoreAdapter>]

export async function everyStoreFamily(prefix: string): Promise<StoreUnderTest[]> {
  const context = (workspace?: MemoryStoreContext['workspace']): MemoryStoreContext => ({ store: 'agent', agent: 'support', writable: true, ...(workspace ? { workspace } : {}) })
  const folders: string[] = []
  const closers: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const close of closers) await close()
    for (const folder of folders) rmSync(folder, { recursive: true, force: true })
  })
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), `${prefix}-`))
    folders.push(dir)
    return dir
  }
  const databases = await postgresTestDatabases(prefix.replace(/\W/g, '_'))
  const stores: StoreUnderTest[] = [
    ['inMemoryMemoryStore', async () => inMemoryMemoryStore().create(context())],
    ['workspaceJsonlMemoryStore (fs)', async () => workspaceJsonlMemoryStore().create(context(createWorkspace({ storage: createStorage({ driver: fsDriver({ base: tempDir() }) }) })))],
    ['sqliteMemoryStore', async () => {
      const factory = sqliteMemoryStore({ file: join(tempDir(), 'memory.db') })
      closers.push(() => factory.close())
      return factory.create()
    }],
  ]
  if (databases.reachable) {
    stores.push(['postgresMemoryStore', async () => {
      const factory = postgresMemoryStore({ connectionString: await databases.fresh() })
      databases.onClose(() => factory.close())
      return factory.create()
    }])
  }
  else it.skip(`postgresMemoryStore: ${POSTGRES_SKIP_HINT}`, () => {})
  return stores
}

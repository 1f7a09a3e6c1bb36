import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, describe, expect, it } from 'vitest'
import { inMemoryMemoryStore } from '../../../src/memory/stores/in-memory.ts'
import { workspaceJsonlMemoryStore } from '../../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryStoreContext } from '../../../src/memory/types.ts'
import { testMemoryStore } from '../../../src/testing/index.ts'
import { createWorkspace } from '../../../src/workspace/workspace.ts'
import { connectRedis, REDIS_SKIP_HINT, redisWorkspace } from '../../helpers/redis.ts'

const context = (workspace?: MemoryStoreContext['workspace']): MemoryStoreContext => ({ store: 'agent', agent: 'support', writable: true, workspace })

const folders: string[] = []
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

const vitest = { describe, it, expect }

testMemoryStore('inMemoryMemoryStore', () => inMemoryMemoryStore().create(context()), vitest)

testMemoryStore('workspaceJsonlMemoryStore on the unstorage memory driver', () => {
  const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
  return workspaceJsonlMemoryStore().create(context(workspace))
}, vitest)

testMemoryStore('workspaceJsonlMemoryStore on the unstorage fs driver', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vam-store-'))
  folders.push(dir)
  const workspace = createWorkspace({ storage: createStorage({ driver: fsDriver({ base: dir }) }) })
  return workspaceJsonlMemoryStore().create(context(workspace))
}, vitest)

// The Redis driver: REDIS_URL (CI) or a local server on 6390; skipped with a message when none answers.
const redisReachable = await connectRedis().then((client) => {
  client?.disconnect()
  return client !== undefined
})
if (redisReachable) {
  const storages: Array<ReturnType<typeof createStorage>> = []
  afterAll(async () => {
    for (const storage of storages) {
      await storage.clear()
      await storage.dispose()
    }
  })
  let next = 0
  testMemoryStore('workspaceJsonlMemoryStore on the unstorage redis driver', () => {
    const workspace = redisWorkspace(`vam-conformance-${process.pid}-${next++}`)
    storages.push(workspace.storage)
    return workspaceJsonlMemoryStore().create(context(workspace))
  }, vitest)
}
else {
  describe('workspaceJsonlMemoryStore on the unstorage redis driver', () => {
    it.skip(`skipped: ${REDIS_SKIP_HINT}`, () => {})
  })
}

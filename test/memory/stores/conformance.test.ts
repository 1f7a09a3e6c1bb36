import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, describe, it } from 'vitest'
import { inMemoryMemoryStore } from '../../../src/memory/stores/in-memory.ts'
import { workspaceJsonlMemoryStore } from '../../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryStoreContext } from '../../../src/memory/types.ts'
import { testMemoryStore } from '../../../src/testing/store-conformance.ts'
import { createWorkspace } from '../../../src/workspace/workspace.ts'

const context = (workspace?: MemoryStoreContext['workspace']): MemoryStoreContext => ({ store: 'agent', agent: 'support', writable: true, workspace })

const folders: string[] = []
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

testMemoryStore('inMemoryMemoryStore', () => inMemoryMemoryStore().create(context()))

testMemoryStore('workspaceJsonlMemoryStore on the unstorage memory driver', () => {
  const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
  return workspaceJsonlMemoryStore().create(context(workspace))
})

testMemoryStore('workspaceJsonlMemoryStore on the unstorage fs driver', () => {
  const dir = mkdtempSync(join(tmpdir(), 'vam-store-'))
  folders.push(dir)
  const workspace = createWorkspace({ storage: createStorage({ driver: fsDriver({ base: dir }) }) })
  return workspaceJsonlMemoryStore().create(context(workspace))
})

// The Redis driver: REDIS_URL (CI) or a local server on 6390; skipped with a message when none answers.
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6390'
const redisReachable = await (async () => {
  const { default: Redis } = await import('ioredis')
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.ping()
    return true
  }
  catch {
    return false
  }
  finally {
    client.disconnect()
  }
})()
if (redisReachable) {
  const { default: redisDriver } = await import('unstorage/drivers/redis')
  const storages: Array<ReturnType<typeof createStorage>> = []
  afterAll(async () => {
    for (const storage of storages) {
      await storage.clear()
      await storage.dispose()
    }
  })
  let next = 0
  testMemoryStore('workspaceJsonlMemoryStore on the unstorage redis driver', () => {
    const storage = createStorage({ driver: redisDriver({ url: REDIS_URL, base: `vam-conformance-${process.pid}-${next++}` }) })
    storages.push(storage)
    return workspaceJsonlMemoryStore().create(context(createWorkspace({ storage })))
  })
}
else {
  describe('workspaceJsonlMemoryStore on the unstorage redis driver', () => {
    it.skip(`skipped: no Redis reachable at ${REDIS_URL} (start one with: redis-server --port 6390 --save '' --appendonly no --daemonize yes)`, () => {})
  })
}

/**
 * `EventLog.peek`: a read answered in the turn it is called while the log is unchanged (the
 * workspace's synchronous `statNow`), and `NOT_NOW` whenever the state may be behind the value: a
 * log never read, another process's line (also after it compacted the log, or in a folder renamed
 * over the log's), a same-size replacement, a partition not loaded, or a workspace that cannot
 * stat without waiting (Redis).
 */
import { cpSync, mkdtempSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { NOT_NOW } from '../../src/log/index.ts'
import { partitionKey, type MemoryRecordState } from '../../src/memory/records.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryTarget } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { Workspace } from '../../src/workspace/types.ts'
import { redisWorkspace, useRedisProbe } from '../helpers/redis.ts'
import { runRememberLoop } from './fixtures/run-remember-loop.ts'

const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const audit = { via: 'api' }
const tempDir = () => mkdtempSync(join(tmpdir(), 'vam-peek-'))
const store = (workspace: Workspace) => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace, writable: true })
const contents = (state: MemoryRecordState) => [...state.records.values()].map(record => record.content)

describe('EventLog.peek', () => {
  it('answers in the same turn once the log was read and is unchanged, and says NOT_NOW before the first read', async () => {
    const dir = tempDir()
    await store(createWorkspace({ dir })).append(alice, { kind: 'semantic', content: 'aisle seat' }, { audit })
    const reader = store(createWorkspace({ dir }))
    expect(reader.log.peek!(contents)).toBe(NOT_NOW)
    await reader.export(alice)
    expect(reader.log.peek!(contents)).toEqual(['aisle seat'])
  })

  it('says NOT_NOW after another process appended, and the next search finds that line', async () => {
    const dir = tempDir()
    const reader = store(createWorkspace({ dir }))
    await reader.append(alice, { kind: 'semantic', content: 'mine' }, { audit })
    expect(reader.log.peek!(contents)).toEqual(['mine'])
    await runRememberLoop(dir, 'other', 1)
    expect(reader.log.peek!(contents)).toBe(NOT_NOW)
    expect((await reader.search(alice, { query: 'other' })).map(hit => hit.record.content)).toEqual(['other 0'])
    expect(reader.log.peek!(contents)).toEqual(['mine', 'other 0'])
  }, 30_000)

  it('says NOT_NOW after another process compacted the log and appended to the new file, and the next search finds every line it acknowledged', async () => {
    const dir = tempDir()
    const reader = store(createWorkspace({ dir }))
    await reader.append(alice, { kind: 'semantic', content: 'mine' }, { audit })
    expect(reader.log.peek!(contents)).toEqual(['mine'])
    const file = join(dir, 'memory/memory.jsonl')
    const before = statSync(file).ino
    await runRememberLoop(dir, 'other', 2, undefined, { compact: true })
    // The child's compaction renamed a new file over the log (another inode at the path).
    expect(statSync(file).ino).not.toBe(before)
    expect(reader.log.peek!(contents)).toBe(NOT_NOW)
    expect((await reader.search(alice, { query: 'other' })).map(hit => hit.record.content).sort()).toEqual(['other 0', 'other 1', 'other after'])
    expect(reader.log.peek!(contents)).toEqual(['mine', 'other 0', 'other 1', 'other after'])
  }, 30_000)

  it('says NOT_NOW after the log\'s folder was replaced by one where another process appended, and the next search finds its line', async () => {
    const dir = tempDir()
    const reader = store(createWorkspace({ dir }))
    await reader.append(alice, { kind: 'semantic', content: 'mine' }, { audit })
    expect(reader.log.peek!(contents)).toEqual(['mine'])
    // Another process appends to a copy of the folder, which is then renamed over the log's folder.
    const copy = tempDir()
    cpSync(join(dir, 'memory'), join(copy, 'memory'), { recursive: true })
    await runRememberLoop(copy, 'other', 1)
    renameSync(join(dir, 'memory'), join(dir, 'memory.old'))
    renameSync(join(copy, 'memory'), join(dir, 'memory'))
    expect(reader.log.peek!(contents)).toBe(NOT_NOW)
    expect((await reader.search(alice, { query: 'other' })).map(hit => hit.record.content)).toEqual(['other 0'])
    expect(reader.log.peek!(contents)).toEqual(['mine', 'other 0'])
  }, 30_000)

  it('says NOT_NOW when the log file was replaced by one of the same size, and the next search reads the new file', async () => {
    const dir = tempDir()
    const reader = store(createWorkspace({ dir }))
    await reader.append(alice, { kind: 'semantic', content: 'window seat' }, { audit })
    expect(await reader.search(alice, { query: 'window' })).toHaveLength(1)
    // Another writer's copy of the same bytes renamed over the log: same size, another inode.
    const file = join(dir, 'memory/memory.jsonl')
    writeFileSync(`${file}.copy`, readFileSync(file))
    renameSync(`${file}.copy`, file)
    expect(reader.log.peek!(contents)).toBe(NOT_NOW)
    expect((await reader.search(alice, { query: 'window' })).map(hit => hit.record.content)).toEqual(['window seat'])
  })

  it('says NOT_NOW for a partition not loaded yet, and answers for it once an operation loaded it', async () => {
    const dir = tempDir()
    const writer = workspaceJsonlMemoryStore({ checkpointEvery: 1 }).create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true })
    await writer.append(alice, { kind: 'semantic', content: 'tea' }, { audit })
    await writer.log.checkpoint()
    const reader = store(createWorkspace({ dir }))
    const access = { partitions: [partitionKey(alice.store, alice.scope)] }
    // Any read loads the checkpoint's stamp and directory; alice's section loads on her first operation.
    await reader.export({ store: 'agent', scope: { agent: 'support', user: 'bob' } })
    expect(reader.log.peek!(contents, access)).toBe(NOT_NOW)
    await reader.export(alice)
    expect(reader.log.peek!(contents, access)).toEqual(['tea'])
  })
})

describe('EventLog.peek on Redis', () => {
  const prefix = `vam-test-peek-${process.pid}-${Date.now()}`
  const redis = useRedisProbe(prefix, 'Redis peek tests')

  it('says NOT_NOW on a workspace that cannot stat without waiting, and search still answers', async (context) => {
    if (!redis.probe) return context.skip()
    const workspace = redisWorkspace(`${prefix}:one`)
    const adapter = store(workspace)
    await adapter.append(alice, { kind: 'semantic', content: 'blues records' }, { audit })
    expect(workspace.statNow!('memory:memory.jsonl')).toBe(false)
    expect(adapter.log.peek!(contents)).toBe(NOT_NOW)
    expect((await adapter.search(alice, { query: 'blues' })).map(hit => hit.record.content)).toEqual(['blues records'])
    await workspace.storage.dispose()
  })
})

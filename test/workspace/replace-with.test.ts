import { mkdtempSync, readdirSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import type { Workspace } from '../../src/workspace/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { redisWorkspace, useRedisProbe } from '../helpers/redis.ts'

/** replaceWith on one workspace: the source's value replaces the key's, the source is gone, and a size that differs changes nothing. */
async function checkReplaceWith(workspace: Workspace): Promise<void> {
  await workspace.append('memory:data', 'old value\n')
  await workspace.append('memory:data.rewrite', 'new ')
  await workspace.append('memory:data.rewrite', 'value, longer\n')
  expect(await workspace.replaceWith('memory:data', 'memory:data.rewrite', { ifSize: 3 })).toBe(false)
  expect(await workspace.replaceWith('memory:data', 'memory:data.rewrite', { ifSize: 10, sourceSize: 5 })).toBe(false)
  expect(await workspace.readText('memory:data')).toBe('old value\n')
  expect(await workspace.replaceWith('memory:data', 'memory:data.rewrite', { ifSize: 10, sourceSize: 18 })).toBe(true)
  expect(await workspace.readText('memory:data')).toBe('new value, longer\n')
  expect((await workspace.stat('memory:data'))?.size).toBe(18)
  expect(Buffer.from((await workspace.readBytes('memory:data', 4, 9))!).toString()).toBe('value')
  expect(await workspace.has('memory:data.rewrite')).toBe(false)
  // A missing source replaces nothing.
  expect(await workspace.replaceWith('memory:data', 'memory:data.rewrite')).toBe(false)
  expect(await workspace.readText('memory:data')).toBe('new value, longer\n')
  // Appends after the swap grow the new value.
  await workspace.append('memory:data', 'tail\n')
  expect(await workspace.readText('memory:data')).toBe('new value, longer\ntail\n')
}

describe('Workspace.replaceWith', () => {
  it('on the fs driver renames the source file over the value (a new inode) and leaves no other file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-replace-with-'))
    const workspace = createWorkspace({ dir })
    await checkReplaceWith(workspace)
    expect(readdirSync(join(dir, 'memory'))).toEqual(['data'])
    await workspace.append('memory:data.rewrite', 'third\n')
    const inode = statSync(join(dir, 'memory', 'data.rewrite')).ino
    expect(await workspace.replaceWith('memory:data', 'memory:data.rewrite')).toBe(true)
    expect(statSync(join(dir, 'memory', 'data')).ino).toBe(inode)
  })

  it('on the memory driver moves the value', async () => {
    await checkReplaceWith(createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }))
  })

  const redis = useRedisProbe('vam-replace-with', 'replaceWith on Redis')
  it('on the redis driver renames the key in one script', async (context) => {
    if (!redis.probe) return context.skip()
    await checkReplaceWith(redisWorkspace(`vam-replace-with:${Date.now()}`))
  })
})

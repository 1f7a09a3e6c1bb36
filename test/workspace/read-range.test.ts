import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { Workspace } from '../../src/workspace/types.ts'
import { redisWorkspace, useRedisProbe } from '../helpers/redis.ts'


const bytes = Buffer.from('abc\né€x\nlast\n', 'utf8')

async function checkRanges(workspace: Workspace, key: string) {
  await workspace.append(key, 'abc\n')
  await workspace.append(key, 'é€x\n')
  await workspace.append(key, 'last\n')
  const range = async (start?: number, end?: number) => Buffer.from((await workspace.readBytes(key, start, end))!).toString('latin1')
  const expected = (start: number, end?: number) => bytes.subarray(start, end).toString('latin1')
  expect(await range(0, 4)).toBe(expected(0, 4))
  expect(await range(4, 11)).toBe(expected(4, 11))
  expect(await range(5, 7)).toBe(expected(5, 7))
  expect(await range(11)).toBe(expected(11))
  expect(await range(11, 1000)).toBe(expected(11))
  expect(await range(3, 3)).toBe('')
  expect(await range(1000, 2000)).toBe('')
  expect(await workspace.readBytes(`${key}.missing`, 0, 4)).toBeUndefined()
}

describe('Workspace.readBytes with an end', () => {
  it('reads a byte range of a value on the fs driver', async () => {
    await checkRanges(createWorkspace({ dir: mkdtempSync(join(tmpdir(), 'vam-range-')) }), 'memory:log.jsonl')
  })

  it('reads a byte range of a value on the memory driver', async () => {
    await checkRanges(createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }), 'memory:log.jsonl')
  })

  const redis = useRedisProbe('vam-range-test', 'ranged reads')
  it('reads a byte range of a value on the redis driver (GETRANGE)', async (context) => {
    if (!redis.probe) return context.skip()
    await checkRanges(redisWorkspace(`vam-range-test:${Date.now()}`), 'memory:log.jsonl')
  })
})

describe('Workspace reads on Redis while another client replaces the value', () => {
  const redis = useRedisProbe('vam-range-race', 'racing reads')
  it('a Redis read sees the whole value or no value, never a mix of a value and its absence', async (context) => {
    if (!redis.probe) return context.skip()
    const base = `vam-range-race:${Date.now()}`
    const workspace = redisWorkspace(base)
    const value = '{"type":"head","lines":7}\n'
    const redisKey = `${base}:memory:log.jsonl.head`
    let racing = true
    const writer = (async () => {
      // One client deletes and creates the key over and over, as a writer replacing it would.
      while (racing) {
        await redis.probe!.del(redisKey)
        await redis.probe!.set(redisKey, value)
      }
    })()
    const seen = new Set<string>()
    for (let i = 0; i < 1500; i++) {
      const [bytes, stat] = await Promise.all([workspace.readBytes('memory:log.jsonl.head'), workspace.stat('memory:log.jsonl.head')])
      seen.add(bytes === undefined ? 'absent' : Buffer.from(bytes).toString('utf8') === value ? 'whole' : `mixed: ${JSON.stringify(Buffer.from(bytes).toString('utf8'))}`)
      seen.add(stat === undefined ? 'absent' : stat.size === Buffer.byteLength(value) ? 'whole' : `mixed size ${stat.size}`)
    }
    racing = false
    await writer
    expect([...seen].filter(kind => kind !== 'absent' && kind !== 'whole')).toEqual([])
    expect(seen.has('whole')).toBe(true)
  })
})

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, describe, expect, it } from 'vitest'
import { createWorkspace } from '../../src/workspace/workspace.ts'

const folders: string[] = []
afterAll(() => { for (const folder of folders) rmSync(folder, { recursive: true, force: true }) })

// Every byte value, none of them valid UTF-8 on its own from 0x80 on.
const BYTES = Uint8Array.from({ length: 512 }, (_, n) => n % 256)

describe('Workspace.replaceBytes', () => {
  it('on fs, keeps the bytes as they are (read back by readBytes, sized by stat), only while the guard key has the size given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-bytes-'))
    folders.push(dir)
    const workspace = createWorkspace({ dir })
    await workspace.append('memory:guard', 'four')
    expect(await workspace.replaceBytes!('memory:block', BYTES, { ifSizeOf: { key: 'memory:guard', size: 3 } })).toBe(false)
    expect(await workspace.has('memory:block')).toBe(false)
    expect(await workspace.replaceBytes!('memory:block', BYTES, { ifSizeOf: { key: 'memory:guard', size: 4 } })).toBe(true)
    expect(readFileSync(join(dir, 'memory', 'block'))).toEqual(Buffer.from(BYTES))
    expect(Buffer.from((await workspace.readBytes('memory:block', 128, 384))!)).toEqual(Buffer.from(BYTES.subarray(128, 384)))
    expect((await workspace.stat('memory:block'))?.size).toBe(512)
  })

  it('on a driver that holds text (memory), answers undefined and writes nothing', async () => {
    const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
    await workspace.append('memory:guard', 'four')
    expect(await workspace.replaceBytes!('memory:block', BYTES, { ifSizeOf: { key: 'memory:guard', size: 4 } })).toBeUndefined()
    expect(await workspace.has('memory:block')).toBe(false)
  })
})

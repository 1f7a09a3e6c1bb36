import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { createWorkspace } from '../../src/workspace/workspace.ts'

const temporaryDir = () => mkdtempSync(join(tmpdir(), 'vam-ws-'))

describe('createWorkspace', () => {
  it('defaults to the fs driver in the given folder and stores keys as nested files', async () => {
    const dir = temporaryDir()
    const workspace = createWorkspace({ dir })
    await workspace.append('memory/memory.jsonl', '{"a":1}\n')
    expect(workspace.dir).toBe(dir)
    expect(readFileSync(join(dir, 'memory', 'memory.jsonl'), 'utf8')).toBe('{"a":1}\n')
  })

  it('append on the fs driver grows the file in place without rewriting it', async () => {
    const dir = temporaryDir()
    const workspace = createWorkspace({ dir })
    await workspace.append('log.jsonl', 'first\n')
    const inode = statSync(join(dir, 'log.jsonl')).ino
    await workspace.append('log.jsonl', 'second\n')
    // A rewrite through a temporary file and rename would give the file a new inode.
    expect(statSync(join(dir, 'log.jsonl')).ino).toBe(inode)
    expect(await workspace.readText('log.jsonl')).toBe('first\nsecond\n')
  })

  it('append on the memory driver appends to the driver instance', async () => {
    const driver = memoryDriver()
    const workspace = createWorkspace({ storage: createStorage({ driver }) })
    await workspace.append('memory:log.jsonl', 'a\n')
    await workspace.append('memory/log.jsonl', 'b\n')
    expect((driver.getInstance!() as Map<string, string>).get('memory:log.jsonl')).toBe('a\nb\n')
  })

  it('concurrent appends to one key keep every line, in call order', async () => {
    const workspace = createWorkspace({ dir: temporaryDir() })
    await Promise.all(Array.from({ length: 200 }, (_, index) => workspace.append('log.jsonl', `${index}\n`)))
    const lines = (await workspace.readText('log.jsonl'))!.trimEnd().split('\n')
    expect(lines).toEqual(Array.from({ length: 200 }, (_, index) => String(index)))
  })

  it('two workspace objects over one folder serialize their appends', async () => {
    const dir = temporaryDir()
    const first = createWorkspace({ dir })
    const second = createWorkspace({ dir })
    await Promise.all(Array.from({ length: 100 }, (_, index) => (index % 2 ? first : second).append('log.jsonl', `line-${index}\n`)))
    expect((await first.readText('log.jsonl'))!.trimEnd().split('\n')).toHaveLength(100)
  })

  it('falls back to a guarded read-modify-write on drivers without a native append', async () => {
    // A mounted fs driver under a prefix still appends natively; a driver we cannot reach natively
    // (simulated by hiding the memory driver's instance) uses the fallback and keeps every line.
    const inner = memoryDriver()
    const opaque = { ...inner, name: 'opaque', getInstance: undefined }
    const workspace = createWorkspace({ storage: createStorage({ driver: opaque }) })
    await Promise.all(Array.from({ length: 50 }, (_, index) => workspace.append('log.jsonl', `${index}\n`)))
    expect((await workspace.readText('log.jsonl'))!.trimEnd().split('\n')).toHaveLength(50)
  })

  it('readText reads a one-line JSON log as text, not as a parsed value', async () => {
    const workspace = createWorkspace({ storage: createStorage({ driver: fsDriver({ base: temporaryDir() }) }) })
    await workspace.append('log.jsonl', '{"seq":1}\n')
    expect(await workspace.readText('log.jsonl')).toBe('{"seq":1}\n')
  })

  it('readText of a missing key is undefined', async () => {
    expect(await createWorkspace({ dir: temporaryDir() }).readText('nothing.jsonl')).toBeUndefined()
  })

  it('writeJson and readJson round-trip a value', async () => {
    const workspace = createWorkspace({ dir: temporaryDir() })
    await workspace.writeJson('agents/support/approvals/apr_1.json', { id: 'apr_1', status: 'pending' })
    expect(await workspace.readJson('agents:support:approvals:apr_1.json')).toEqual({ id: 'apr_1', status: 'pending' })
  })

  it('readJson of a corrupt value raises WORKSPACE_CORRUPT_JSON instead of returning nothing', async () => {
    const dir = temporaryDir()
    writeFileSync(join(dir, 'broken.json'), '{"id":')
    await expect(createWorkspace({ dir }).readJson('broken.json')).rejects.toMatchObject({ code: 'WORKSPACE_CORRUPT_JSON' })
  })

  it('truncate shortens a value to a byte length', async () => {
    const workspace = createWorkspace({ dir: temporaryDir() })
    await workspace.append('log.jsonl', 'complete\nto') // 'to' is a torn line
    await workspace.truncate('log.jsonl', Buffer.byteLength('complete\n'))
    expect(await workspace.readText('log.jsonl')).toBe('complete\n')
  })

  it('rejects keys with .. segments', async () => {
    const workspace = createWorkspace({ dir: temporaryDir() })
    await expect(workspace.append('../escape.jsonl', 'x\n')).rejects.toMatchObject({ code: 'WORKSPACE_KEY_INVALID' })
    await expect(workspace.readText('a/../../b')).rejects.toMatchObject({ code: 'WORKSPACE_KEY_INVALID' })
  })

  it('a read-only workspace refuses writes and leaves the value unchanged', async () => {
    const dir = temporaryDir()
    await createWorkspace({ dir }).append('log.jsonl', 'kept\n')
    const readOnly = createWorkspace({ dir, writable: false })
    await expect(readOnly.append('log.jsonl', 'lost\n')).rejects.toMatchObject({ code: 'WORKSPACE_READ_ONLY' })
    expect(await readOnly.readText('log.jsonl')).toBe('kept\n')
  })

  it('withLock runs tasks on one key one at a time', async () => {
    const workspace = createWorkspace({ dir: temporaryDir() })
    let running = 0
    let most = 0
    await Promise.all(Array.from({ length: 10 }, () => workspace.withLock('k', async () => {
      running++
      most = Math.max(most, running)
      await new Promise(done => setTimeout(done, 2))
      running--
    })))
    expect(most).toBe(1)
  })

  it('lockNow takes the lock of a free key in the calling turn; while it is held lockNow answers undefined and withLock waits for its release', async () => {
    const workspace = createWorkspace({ dir: temporaryDir() })
    const release = workspace.lockNow!('k')
    expect(release).toBeTypeOf('function')
    expect(workspace.lockNow!('k')).toBeUndefined()
    const order: string[] = []
    const queued = workspace.withLock('k', async () => {
      order.push('queued task')
    })
    await new Promise(done => setTimeout(done, 5))
    order.push('released')
    release!()
    await queued
    expect(order).toEqual(['released', 'queued task'])
    const again = workspace.lockNow!('k')
    expect(again).toBeTypeOf('function')
    again!()
  })
})

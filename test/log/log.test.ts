import { createHash } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, describe, expect, it } from 'vitest'
import { canonicalJson, sha256Hex } from '../../src/log/index.ts'
import { memberJson } from '../../src/log/canonical-json.ts'
import { utf8Length } from '../../src/log/index.ts'
import { openMemoryLog, verifyLog } from '../../src/memory/event-log.ts'
import type { MemoryEventDraft } from '../../src/memory/records.ts'
import type { MemoryScope } from '../../src/memory/types.ts'
import type { Workspace } from '../../src/workspace/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

const KEY = 'memory:memory.jsonl'
const scope: MemoryScope = { agent: 'support' }
const folders: string[] = []
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

const memoryWorkspace = () => createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
/** A second workspace object over the same storage: a fresh log state that replays from storage. */
const memoryWorkspaceOver = (workspace: Workspace) => createWorkspace({ storage: workspace.storage })
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-log-'))
  folders.push(dir)
  return dir
}
const fsWorkspace = (dir = tempDir()): Workspace => createWorkspace({ storage: createStorage({ driver: fsDriver({ base: dir }) }) })

function rememberDraft(recordId: string, content = 'text'): MemoryEventDraft {
  const at = new Date().toISOString()
  return { type: 'remember', recordId, store: 'agent', scope, version: 1, at, audit: { via: 'api' }, kind: 'semantic', content, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: at }
}

describe('canonical JSON', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { f: 1, e: 2 }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"e":2,"f":1}]},"b":1}')
  })

  it('drops undefined object fields and writes undefined array items as null, like JSON.stringify', () => {
    expect(canonicalJson({ a: undefined, b: [undefined, 1], c: () => 1 })).toBe('{"b":[null,1]}')
  })

  it('uses toJSON (dates become ISO strings) and writes non-finite numbers as null', () => {
    expect(canonicalJson({ at: new Date('2024-01-02T03:04:05.000Z'), n: Number.NaN })).toBe('{"at":"2024-01-02T03:04:05.000Z","n":null}')
  })

  it('parsing canonical JSON and serializing it again gives the same text', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => {
      const text = canonicalJson(value)
      expect(canonicalJson(JSON.parse(text))).toBe(text)
    }))
  })

  it('a string member is written exactly as JSON.stringify writes it, quotes, backslashes, control characters and lone or paired surrogates included (property)', () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', '\u001f', '\u007f', '\u2028', '\ud800', '\udfff', '😀', 'é') }))
    fc.assert(fc.property(text, (value) => {
      expect(memberJson(value)).toBe(JSON.stringify(value))
    }), { numRuns: 1000 })
  })

  it('rejects circular structures', () => {
    const value: Record<string, unknown> = {}
    value.self = value
    expect(() => canonicalJson(value)).toThrow(TypeError)
  })
})

describe('sha256Hex', () => {
  it('gives the SHA-256 test vector for "abc"', async () => {
    expect(await sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })

  it('hashes the UTF-8 bytes of any text', async () => {
    await fc.assert(fc.asyncProperty(fc.string({ unit: 'binary' }), async (text) => {
      expect(await sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'))
    }))
  })
})

describe('utf8Length', () => {
  it('equals the byte length Node writes for any text, lone surrogates included', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: fc.constantFrom('\uD800', '\uDC00', 'a', 'é', '€') }), (a, b) => {
      expect(utf8Length(a + b)).toBe(Buffer.byteLength(a + b, 'utf8'))
    }))
  })
})

describe('memory log engine', () => {
  it('a missing log is an empty, valid log', async () => {
    const workspace = fsWorkspace()
    expect(await verifyLog(workspace, KEY)).toEqual({ ok: true, lines: 0 })
    expect(await openMemoryLog(workspace, KEY).view(state => state.records.size)).toBe(0)
  })

  it('a write whose build throws writes nothing', async () => {
    const workspace = memoryWorkspace()
    const log = openMemoryLog(workspace, KEY)
    await expect(log.write(() => { throw new Error('refused by the caller') })).rejects.toThrow('refused by the caller')
    expect(await workspace.readText(KEY)).toBeUndefined()
  })

  it('a write of an event that cannot apply throws MEMORY_EVENT_CONFLICT and writes nothing', async () => {
    const workspace = memoryWorkspace()
    const log = openMemoryLog(workspace, KEY)
    await log.write(() => [rememberDraft('mem_a')])
    const before = await workspace.readText(KEY)
    const at = new Date().toISOString()
    await expect(log.write(() => [
      rememberDraft('mem_b'),
      { type: 'delete', recordId: 'mem_unknown', store: 'agent', scope, version: 2, at, audit: { via: 'api' } },
    ])).rejects.toMatchObject({ code: 'MEMORY_EVENT_CONFLICT' })
    expect(await workspace.readText(KEY)).toBe(before)
    expect(await log.view(state => [...state.records.keys()])).toEqual(['mem_a'])
  })

  it('opening the same key twice on one workspace shares one state', async () => {
    const workspace = memoryWorkspace()
    await openMemoryLog(workspace, KEY).write(() => [rememberDraft('mem_a')])
    expect(await openMemoryLog(workspace, KEY).view(state => [...state.records.keys()])).toEqual(['mem_a'])
  })

  it('operations on an unchanged fs log do not read the file again', async () => {
    const workspace = fsWorkspace()
    let reads = 0
    const counted: Workspace = { ...workspace, readBytes: async (key, start, end) => { if (key === KEY) reads++; return workspace.readBytes(key, start, end) } }
    const log = openMemoryLog(counted, KEY)
    await log.write(() => [rememberDraft('mem_a')])
    const afterFirst = reads
    for (let index = 0; index < 20; index++) await log.view(state => state.records.size)
    await log.write(() => [rememberDraft('mem_b')])
    await log.view(state => state.records.size)
    expect(afterFirst).toBe(1)
    expect(reads).toBe(1)
  })

  it('a torn tail on the memory driver is moved to <key>.torn-<time> and truncated before the next write', async () => {
    const workspace = memoryWorkspace()
    const log = openMemoryLog(workspace, KEY)
    await log.write(() => [rememberDraft('mem_a', 'héllo wörld')])
    await workspace.append(KEY, '{"v":1,"seq":2,"ty')
    await log.write(() => [rememberDraft('mem_b')])
    const torn = (await workspace.keys('memory')).filter(key => key.startsWith(`${KEY}.torn-`))
    expect(torn).toHaveLength(1)
    expect(await workspace.readText(torn[0]!)).toBe('{"v":1,"seq":2,"ty')
    expect(await verifyLog(workspace, KEY)).toEqual({ ok: true, lines: 2 })
    expect(await log.view(state => [...state.records.keys()])).toEqual(['mem_a', 'mem_b'])
  })

  it('verifyLog reports the first bad line without changing the value', async () => {
    const workspace = memoryWorkspace()
    const log = openMemoryLog(workspace, KEY)
    for (const id of ['mem_a', 'mem_b', 'mem_c']) await log.write(() => [rememberDraft(id)])
    const text = (await workspace.readText(KEY))!
    const damaged = text.replace('"mem_b"', '"mem_x"')
    await workspace.truncate(KEY, 0)
    await workspace.append(KEY, damaged)
    expect(await verifyLog(workspace, KEY)).toEqual({ ok: false, lines: 3, firstBad: { line: 2, reason: expect.stringContaining('digest') } })
    expect(await workspace.readText(KEY)).toBe(damaged)
  })

  it('a line reformatted without changing its data (spaces, key order) fails verification as not canonical', async () => {
    const workspace = memoryWorkspace()
    const log = openMemoryLog(workspace, KEY)
    for (const id of ['mem_a', 'mem_b']) await log.write(() => [rememberDraft(id)])
    const [first, second] = (await workspace.readText(KEY))!.trimEnd().split('\n')
    const reordered = JSON.stringify(Object.fromEntries(Object.entries(JSON.parse(second!)).reverse()))
    await workspace.truncate(KEY, 0)
    await workspace.append(KEY, `${first}\n${reordered}\n`)
    expect(await verifyLog(workspace, KEY)).toEqual({ ok: false, lines: 2, firstBad: { line: 2, reason: expect.stringContaining('canonical') } })
    await expect(openMemoryLog(memoryWorkspaceOver(workspace), KEY).view(state => state)).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT' })
  })

  it('a rewritten memory-driver log with a different length is replayed and checked again', async () => {
    const workspace = memoryWorkspace()
    const log = openMemoryLog(workspace, KEY)
    await log.write(() => [rememberDraft('mem_a')])
    await log.write(() => [rememberDraft('mem_b')])
    const text = (await workspace.readText(KEY))!
    await workspace.truncate(KEY, 0)
    await workspace.append(KEY, text.slice(0, text.indexOf('\n') + 1))
    expect(await log.view(state => [...state.records.keys()])).toEqual(['mem_a'])
  })

  it('a second process state (new workspace object) replays the same records from the fs driver', async () => {
    const dir = tempDir()
    const first = fsWorkspace(dir)
    await openMemoryLog(first, KEY).write(() => [rememberDraft('mem_a'), rememberDraft('mem_b')])
    const second = fsWorkspace(dir)
    expect(await openMemoryLog(second, KEY).view(state => [...state.records.values()])).toEqual(await openMemoryLog(first, KEY).view(state => [...state.records.values()]))
  })
})

describe('record copies', () => {
  it('a copy is deep and equal, and a "__proto__" key in metadata stays data', async () => {
    const { cloneRecord } = await import('../../src/memory/records.ts')
    const metadata = JSON.parse('{"__proto__":{"polluted":true},"nested":{"list":[1,{"a":2}]}}') as Record<string, unknown>
    const record = { id: 'mem_1', store: 'agent', scope: { agent: 'a' }, kind: 'semantic', content: 'x', tags: ['t'], metadata, pinned: false, supersedes: [], provenance: {}, audit: { via: 'api' }, createdAt: '2026-01-01T00:00:00.000Z', updatedAt: '2026-01-01T00:00:00.000Z', version: 1, status: 'active' as const }
    const copy = cloneRecord(record)
    expect(copy).toEqual(record)
    expect(copy.metadata).not.toBe(record.metadata)
    expect((copy.metadata.nested as { list: unknown[] }).list).not.toBe((record.metadata.nested as { list: unknown[] }).list)
    expect(Object.keys(copy.metadata)).toEqual(['__proto__', 'nested'])
    expect(({} as Record<string, unknown>).polluted).toBeUndefined()
    expect((copy.metadata as { polluted?: unknown }).polluted).toBeUndefined()
  })
})

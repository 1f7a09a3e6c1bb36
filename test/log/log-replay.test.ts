// Replay's one-pass canonical check and its general path (src/log/line-check.ts, checkLineSync).
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/log/index.ts'
import { openMemoryLog, verifyLog } from '../../src/memory/event-log.ts'
import type { MemoryEventDraft } from '../../src/memory/records.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

const KEY = 'memory:memory.jsonl'
const memoryWorkspace = () => createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
const over = (workspace: ReturnType<typeof memoryWorkspace>) => createWorkspace({ storage: workspace.storage })

function draft(recordId: string, content: string, metadata: Record<string, unknown> = {}): MemoryEventDraft {
  const at = '2024-05-01T09:30:00.000Z'
  return { type: 'remember', recordId, store: 'agent', scope: { agent: 'support', user: 'u1' }, version: 1, at, audit: { via: 'api' }, kind: 'semantic', content, tags: ['x'], metadata, pinned: false, confidence: 0.75, supersedes: [], provenance: {}, createdAt: at }
}

describe('replay of canonical lines', () => {
  it('lines with control characters, quotes, integer-like metadata keys and fractions replay to the written records', async () => {
    const workspace = memoryWorkspace()
    const log = openMemoryLog(workspace, KEY)
    const written = [
      ...(await log.write(() => [draft('mem_a', 'tab\there, quote " and back\\slash, bell \u0007, emoji 🎉')])),
      ...(await log.write(() => [draft('mem_b', 'keys', { 10: 'ten', 9: 'nine', '-x': 1, nested: { b: [1.5, -2, 1e21], a: null } })])),
    ]
    const replayed = await openMemoryLog(over(workspace), KEY).view(state => [...state.records.values()])
    expect(replayed).toEqual(written)
    expect(await verifyLog(workspace, KEY)).toEqual({ ok: true, lines: 2 })
  })

  it('values JSON writes differently (undefined members, a Date, -0, NaN, an array hole, unsorted keys) are folded as a replay reads them, not as given', async () => {
    const workspace = memoryWorkspace()
    const log = openMemoryLog(workspace, KEY)
    // eslint-disable-next-line no-sparse-arrays
    const metadata = { z: 1, a: undefined, when: new Date(0), minus: -0, nan: Number.NaN, list: [1, , undefined, 2], nested: { b: 2, a: { d: 1, c: -0 } } }
    const [written] = await log.write(() => [draft('mem_a', 'values', metadata)])
    expect(written!.metadata).toEqual({ list: [1, null, null, 2], minus: 0, nan: null, nested: { a: { c: 0, d: 1 }, b: 2 }, when: '1970-01-01T00:00:00.000Z', z: 1 })
    expect(Object.keys(written!.metadata)).toEqual(['list', 'minus', 'nan', 'nested', 'when', 'z'])
    expect(Object.is((written!.metadata.minus as number), 0)).toBe(true)
    // The caller's objects are not shared with the state.
    metadata.nested.b = 3
    const replayed = await openMemoryLog(over(workspace), KEY).view(state => [...state.records.values()])
    expect(replayed).toEqual([written])
    expect(await log.view(state => state.records.get('mem_a')!.metadata)).toEqual(replayed[0]!.metadata)
  })

  it('the records of one scope share one frozen scope object, whether replayed or written after the replay', async () => {
    const workspace = memoryWorkspace()
    await openMemoryLog(workspace, KEY).write(() => [draft('mem_a', 'one'), { ...draft('mem_b', 'two'), recordId: 'mem_b' }].map((event, index) => ({ ...event, at: `2024-05-01T09:30:0${index}.000Z` })))
    const reopened = openMemoryLog(over(workspace), KEY)
    await reopened.view(() => undefined)
    await reopened.write(() => [draft('mem_c', 'three')])
    const scopes = await reopened.view(state => ['mem_a', 'mem_b', 'mem_c'].map(id => state.records.get(id)!.scope))
    expect(scopes[0]).toEqual({ agent: 'support', user: 'u1' })
    expect(Object.isFrozen(scopes[0])).toBe(true)
    expect(scopes[1]).toBe(scopes[0])
    expect(scopes[2]).toBe(scopes[0])
  })

  it('a write after an open from a checkpoint shares the checkpoint\'s scope object', async () => {
    const workspace = memoryWorkspace()
    const log = openMemoryLog(workspace, KEY)
    await log.write(() => [draft('mem_a', 'one')])
    await log.checkpoint()
    const reopened = openMemoryLog(over(workspace), KEY)
    await reopened.write(() => [draft('mem_b', 'two')])
    const [first, second] = await reopened.view(state => ['mem_a', 'mem_b'].map(id => state.records.get(id)!.scope))
    expect(second).toBe(first)
  })

  it('a number written in another form (1.0 for 1, 0.750 for 0.75) fails verification as not canonical', async () => {
    for (const [from, to] of [['"version":1', '"version":1.0'], ['"confidence":0.75', '"confidence":0.750']] as const) {
      const workspace = memoryWorkspace()
      await openMemoryLog(workspace, KEY).write(() => [draft('mem_a', 'text')])
      const text = (await workspace.readText(KEY))!
      expect(text).toContain(from)
      await workspace.replace(KEY, text.replace(from, to))
      expect(await verifyLog(workspace, KEY)).toEqual({ ok: false, lines: 1, firstBad: { line: 1, reason: expect.stringContaining('canonical') } })
    }
  })

  it('an escape JSON.stringify does not write (\\/ or \\u0041) fails verification as not canonical', async () => {
    for (const [from, to] of [['a/b', 'a\\/b'], ['aAb', 'a\\u0041b']] as const) {
      const workspace = memoryWorkspace()
      await openMemoryLog(workspace, KEY).write(() => [draft('mem_a', from)])
      const text = (await workspace.readText(KEY))!
      await workspace.replace(KEY, text.replace(from, to))
      expect(JSON.parse(text.replace(from, to).trimEnd()).content).toBe(from)
      expect(await verifyLog(workspace, KEY)).toEqual({ ok: false, lines: 1, firstBad: { line: 1, reason: expect.stringContaining('canonical') } })
    }
  })

  it('a line with unsorted nested keys or a space after a colon fails verification as not canonical', async () => {
    const workspace = memoryWorkspace()
    await openMemoryLog(workspace, KEY).write(() => [draft('mem_a', 'text')])
    const text = (await workspace.readText(KEY))!
    for (const edited of [text.replace('{"agent":"support","user":"u1"}', '{"user":"u1","agent":"support"}'), text.replace('"kind":"semantic"', '"kind": "semantic"')]) {
      await workspace.replace(KEY, edited)
      expect(await verifyLog(workspace, KEY)).toEqual({ ok: false, lines: 1, firstBad: { line: 1, reason: expect.stringContaining('canonical') } })
    }
  })

  it('canonicalJson gives the same text on its fast path and for objects whose keys are not in order', () => {
    expect(canonicalJson({ a: 1, b: { c: [1, { d: 2, e: undefined }] } })).toBe('{"a":1,"b":{"c":[1,{"d":2}]}}')
    expect(canonicalJson({ b: 1, a: { 10: 1, 9: 2 } })).toBe('{"a":{"10":1,"9":2},"b":1}')
  })

  it('canonicalJson writes an array hole as null, as JSON.stringify does, on both paths', () => {
    // eslint-disable-next-line no-sparse-arrays
    const holey = [1, , 2]
    expect(canonicalJson({ a: holey })).toBe('{"a":[1,null,2]}')
    expect(canonicalJson({ b: 0, a: holey })).toBe('{"a":[1,null,2],"b":0}')
  })
})

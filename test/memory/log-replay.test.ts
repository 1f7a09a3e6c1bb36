// Replay's one-pass canonical check and its general path (src/memory/log.ts, checkLineSync).
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { canonicalJson } from '../../src/memory/digest.ts'
import { openMemoryLog, verifyLog } from '../../src/memory/log.ts'
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
})

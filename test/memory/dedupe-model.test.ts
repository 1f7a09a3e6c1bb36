import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, describe, expect, it } from 'vitest'
import { normalizeContent } from '../../src/memory/dedupe.ts'
import { hardDeleteMemoryRecord, importMemoryScope } from '../../src/memory/retention.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import { sqliteMemoryStore } from '../../src/memory/stores/sqlite.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryRecord, MemoryStoreAdapter, MemoryTarget } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

// Property: the duplicate check of a store answers as a model that scans the scope's records,
// whatever mix of remembers (duplicates skipped or kept), same- and other-content supersedes,
// deletes, erasures and imports came before: a remember is a duplicate exactly when an active
// record of the scope and kind holds the content (one it does not supersede), and then returns one
// of those records. The JSONL store is also reopened (a fresh process replays the log) and must agree.

const target: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'ann' } }
const api = { via: 'api' as const }
const contents = ['I like tea', 'i LIKE  tea', 'owns a cat', 'Owns a cat ']
const kinds = ['semantic', 'profile'] as const

type Step =
  | { op: 'remember' | 'keep'; content: number; kind: number }
  | { op: 'supersede'; pick: number; content: number; kind: number }
  | { op: 'delete' | 'erase'; pick: number }
  | { op: 'import'; content: number; kind: number; superseded: boolean }

const index = (length: number) => fc.nat({ max: length - 1 })
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constantFrom('remember' as const, 'keep' as const), content: index(contents.length), kind: index(kinds.length) }),
  fc.record({ op: fc.constant('supersede' as const), pick: fc.nat(), content: index(contents.length), kind: index(kinds.length) }),
  fc.record({ op: fc.constantFrom('delete' as const, 'erase' as const), pick: fc.nat() }),
  fc.record({ op: fc.constant('import' as const), content: index(contents.length), kind: index(kinds.length), superseded: fc.boolean() }),
)

/** The model's answer: the active records of the kind holding the content that `supersedes` leaves. */
const holders = (model: MemoryRecord[], kind: string, content: string, supersedes: readonly string[] = []) =>
  model.filter(record => record.status === 'active' && record.kind === kind && normalizeContent(record.content) === normalizeContent(content) && !supersedes.includes(record.id)).map(record => record.id)

let fileIds = 0
/** An export file of one active record (or a superseded one and its newer record of the same content). */
function importFile(kind: string, content: string, superseded: boolean) {
  const id = () => `mem_${(++fileIds).toString(16).padStart(32, '0')}`
  const base = { store: 'agent', scope: target.scope, kind, content, tags: [], metadata: {}, pinned: false, supersedes: [] as string[], provenance: {}, audit: api, createdAt: '2024-01-01T00:00:00.000Z', updatedAt: '2024-01-01T00:00:00.000Z', version: 1, status: 'active' }
  const newer = { ...base, id: id() }
  if (!superseded) return { store: 'agent', scope: target.scope, records: [newer] }
  const older = { ...base, id: id(), version: 2, status: 'superseded', supersededBy: newer.id }
  return { store: 'agent', scope: target.scope, records: [older, { ...newer, supersedes: [older.id] }] }
}

/** Runs `steps` on `adapter`, checking every remember against the model (the scope's records as exported). */
async function check(adapter: MemoryStoreAdapter, steps: Step[]): Promise<void> {
  for (const s of steps) {
    const model = await adapter.export(target)
    if (s.op === 'remember' || s.op === 'keep' || s.op === 'supersede') {
      const kind = kinds[s.kind]!
      const content = contents[s.content]!
      const active = model.filter(record => record.status === 'active')
      if (s.op === 'supersede' && active.length === 0) continue
      const supersedes = s.op === 'supersede' ? [active[s.pick % active.length]!.id] : []
      const expected = s.op === 'keep' ? [] : holders(model, kind, content, supersedes)
      let duplicate: string | undefined
      const written = await adapter.append(target, { kind, content, supersedes }, { audit: api, duplicates: s.op === 'keep' ? 'keep' : 'skip', onDuplicate: record => { duplicate = record.id } })
      if (expected.length === 0) {
        expect(duplicate).toBeUndefined()
        expect(model.some(record => record.id === written.id)).toBe(false)
      }
      else {
        expect(expected).toContain(duplicate)
        expect(written.id).toBe(duplicate)
      }
    }
    else if (s.op === 'import') {
      const kind = kinds[s.kind]!
      const content = contents[s.content]!
      const expected = holders(model, kind, content).length > 0
      const result = await importMemoryScope(adapter, target, importFile(kind, content, s.superseded), { audit: api })
      // The newer (active) record is a duplicate exactly when the scope already holds its content; a superseded one is always added.
      expect(result.duplicates).toBe(expected ? 1 : 0)
      expect(result.added).toBe((s.superseded ? 1 : 0) + (expected ? 0 : 1))
    }
    else if ((s.op === 'delete' || s.op === 'erase') && model.length > 0) {
      const record = model[s.pick % model.length]!
      if (s.op === 'delete') await adapter.delete(target, record.id, { audit: api })
      else await hardDeleteMemoryRecord(adapter, target, record.id, { audit: api })
    }
  }
}

const folders: string[] = []
afterAll(() => { for (const folder of folders) rmSync(folder, { recursive: true, force: true }) })

describe('duplicate check against a model of the scope', () => {
  it('the in-memory store answers every remember and import as the model after any mix of supersedes, deletes, erasures and imports', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
      await check(await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true }), steps)
    }), { numRuns: 150 })
  })

  it('the JSONL store answers as the model, and so does a fresh open of its log after the same steps', async () => {
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), fc.array(step, { minLength: 1, maxLength: 10 }), async (steps, after) => {
      const storage = createStorage({ driver: memoryDriver() })
      const open = () => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', writable: true, workspace: createWorkspace({ storage }) })
      await check(await open(), steps)
      await check(await open(), after)
    }), { numRuns: 80 })
  })

  it('the SQLite store answers as the model', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-dedupe-model-'))
    folders.push(dir)
    let n = 0
    await fc.assert(fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 20 }), async (steps) => {
      const factory = sqliteMemoryStore({ file: join(dir, `memory-${n++}.db`) })
      try { await check(factory.create(), steps) }
      finally { await factory.close() }
    }), { numRuns: 25 })
  })
})

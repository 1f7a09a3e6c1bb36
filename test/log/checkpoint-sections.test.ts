/**
 * Checkpoint sections (docs/log-format.md, "Checkpoints", version 3): an open reads the stamp and
 * the directory, then only the section of each partition it serves or a later line touches; a
 * section is checked against its digest when it is read (an edited one makes the open replay the
 * log); a checkpoint written meanwhile copies the sections never loaded; verifyLog reads them all.
 */
import { createHash } from 'node:crypto'
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { formatMemoryLine, openMemoryLog, verifyLog, type MemoryLogWarning } from '../../src/memory/event-log.ts'
import { partitionKey } from '../../src/memory/records.ts'
import { tombstone, workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryTarget } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { Workspace } from '../../src/workspace/types.ts'
import { asVersion3, asVersion4, asVersion5, readableCheckpoint, resealCheckpoint } from '../helpers/checkpoint.ts'

const KEY = 'memory:memory.jsonl'
const CHECKPOINT = 'memory:memory.jsonl.checkpoint'
const USERS = ['alice', 'bob', 'chloé', 'dan', '太郎']
const target = (user: string): MemoryTarget => ({ store: 'agent', scope: { agent: 'support', user } })
const keyOf = (user: string) => partitionKey('agent', target(user).scope)
const audit = { via: 'api' }
const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
const store = (workspace: Workspace, checkpointEvery?: number | false) => workspaceJsonlMemoryStore(checkpointEvery === undefined ? {} : { checkpointEvery }).create({ store: 'agent', agent: 'support', workspace, writable: true })

/** A log of three records per user and a checkpoint of it (every index built); returns its folder. */
async function logWithCheckpoint(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'vam-sections-'))
  const adapter = store(createWorkspace({ dir }), false)
  for (const user of USERS) {
    for (const content of [`${user} likes tea`, `${user} runs daily`, `${user} owns a cat`]) await adapter.append(target(user), { kind: 'semantic', content }, { audit })
    await adapter.search(target(user), { query: 'tea' })
  }
  expect(await openMemoryLog(createWorkspace({ dir }), KEY).checkpoint()).toBe(true)
  return dir
}

/** A workspace over `dir` that records the byte ranges read of the checkpoint. */
function countedWorkspace(dir: string) {
  const workspace = createWorkspace({ dir })
  const ranges: Array<[number, number | undefined]> = []
  const readBytes = workspace.readBytes.bind(workspace)
  workspace.readBytes = async (key, start, end) => {
    if (key === CHECKPOINT) ranges.push([start ?? 0, end])
    return readBytes(key, start, end)
  }
  return { workspace, ranges }
}

/**
 * The whole state of a fresh open (as the property test of log-checkpoint.test.ts compares it).
 * Partitions without records are left out, and partitions are compared by key: an erase folded
 * onto a loaded section leaves its scope an empty partition (in its checkpoint place), which a
 * replay that never folds the erased records creates only at the scope's next record, if any.
 */
async function wholeState(workspace: Workspace, checkpointEvery?: false) {
  const warnings: MemoryLogWarning[] = []
  const log = openMemoryLog(workspace, KEY, { onWarning: warning => warnings.push(warning), ...(checkpointEvery === false ? { checkpointEvery } : {}) })
  const state = await log.view(state => JSON.parse(JSON.stringify({ records: [...state.records.values()], partitions: [...state.partitions].filter(([, ids]) => ids.length > 0).sort(([a], [b]) => (a < b ? -1 : 1)), erased: [...state.erased].sort() })) as unknown)
  return { state, warnings }
}

/** The section line of `user` in a checkpoint text. */
function sectionLine(text: string, user: string): number {
  const directory = JSON.parse(text.split('\n')[1]!) as { partitions: Array<[string]> }
  return 2 + directory.partitions.findIndex(([key]) => key === keyOf(user))
}

describe('checkpoint sections', () => {
  it('an open that serves one scope reads the directory and that scope\'s section only', async () => {
    const dir = await logWithCheckpoint()
    const { workspace, ranges } = countedWorkspace(dir)
    const log = openMemoryLog(workspace, KEY)
    const hits = await store(workspace).search(target('bob'), { query: 'tea' })
    expect(hits.map(hit => hit.record.content)).toEqual(['bob likes tea'])
    // The stamp and directory, then one section: a range that is not the whole checkpoint.
    expect(ranges).toHaveLength(2)
    const size = readFileSync(join(dir, 'memory/memory.jsonl.checkpoint')).length
    const [start, end] = ranges[1]!
    expect(end! - start).toBeLessThan(size / 3)
    expect(await log.view(state => ({ records: state.records.size, partitions: [...state.partitions.keys()], unloaded: state.sections?.size, indexBuilt: state.indexes.get(keyOf('bob'))?.built }), { partitions: [keyOf('bob')] }))
      .toEqual({ records: 3, partitions: [keyOf('bob')], unloaded: 4, indexBuilt: true })
    // Reads and writes in that scope read nothing more of the checkpoint.
    const bob = store(workspace)
    await bob.append(target('bob'), { kind: 'semantic', content: 'bob likes jazz' }, { audit })
    expect(await bob.export(target('bob'))).toHaveLength(4)
    expect(ranges).toHaveLength(2)
    // A read of every partition loads the rest and gives the state of a full replay.
    expect(await log.view(state => state.records.size)).toBe(16)
    expect((await wholeState(workspace)).state).toEqual((await wholeState(createWorkspace({ dir }), false)).state)
  })

  it('a line after the checkpoint of a partition not loaded is kept until that partition is used, then folded onto its section', async () => {
    const dir = await logWithCheckpoint()
    const writer = store(createWorkspace({ dir }), false)
    const [first] = await writer.export(target('dan'))
    await writer.append(target('dan'), { kind: 'semantic', content: 'dan likes rum', supersedes: [first!.id] }, { audit })
    await writer.delete(target('dan'), (await writer.export(target('dan')))[1]!.id, { audit })
    const { workspace, ranges } = countedWorkspace(dir)
    const log = openMemoryLog(workspace, KEY)
    expect(await store(workspace).export(target('alice'))).toHaveLength(3)
    // The stamp and directory, then alice's section: dan's lines are checked and kept, its section not read.
    expect(ranges).toHaveLength(2)
    expect(await log.view(state => ({ dan: state.partitions.get(keyOf('dan')), unloaded: state.sections?.has(keyOf('dan')) }), { partitions: [keyOf('alice')] })).toEqual({ dan: undefined, unloaded: true })
    const dan = await log.view(state => state.partitions.get(keyOf('dan'))?.map(id => state.records.get(id)!.status), { partitions: [keyOf('dan')] })
    expect(dan).toEqual(['superseded', 'deleted', 'active', 'active'])
    expect(ranges).toHaveLength(3)
    expect((await wholeState(workspace)).state).toEqual((await wholeState(createWorkspace({ dir }), false)).state)
  })

  it('a kept line whose event does not apply to its partition fails every use of that partition with MEMORY_LOG_CORRUPT and its line number; verifyLog reports it', async () => {
    const dir = await logWithCheckpoint()
    const path = join(dir, 'memory/memory.jsonl')
    const last = JSON.parse(readFileSync(path, 'utf8').trimEnd().split('\n').at(-1)!) as { digest: string }
    // A delete of a record dan's scope never had, chained and digested as a writer would write it.
    const draft = { type: 'delete', recordId: `mem_${'e'.repeat(32)}`, store: 'agent', scope: target('dan').scope, version: 2, at: '2024-01-01T00:00:00.000Z', audit } as const
    appendFileSync(path, `${formatMemoryLine(draft, 16, last.digest, false, sha).line}\n`)
    const adapter = store(createWorkspace({ dir }))
    expect(await adapter.export(target('alice'))).toHaveLength(3)
    await expect(adapter.export(target('dan'))).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: { line: 16 } })
    await expect(adapter.append(target('dan'), { kind: 'semantic', content: 'dan likes rum' }, { audit })).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: { line: 16 } })
    // Scopes the line does not touch are read from their sections, as an open reads only what it serves.
    expect(await adapter.export(target('alice'))).toHaveLength(3)
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toMatchObject({ ok: false, firstBad: { line: 16 } })
  })

  it('a cold open whose later lines touch every scope, then a search in one scope, reads one section; it answers as a full replay', async () => {
    const dir = await logWithCheckpoint()
    const writer = store(createWorkspace({ dir }), false)
    for (const user of USERS) await writer.append(target(user), { kind: 'semantic', content: `${user} drinks tea at noon` }, { audit })
    const { workspace, ranges } = countedWorkspace(dir)
    const hits = await store(workspace).search(target('chloé'), { query: 'tea' })
    expect(ranges).toHaveLength(2)
    const replayed = store(createWorkspace({ dir }), false)
    expect(hits).toEqual(await replayed.search(target('chloé'), { query: 'tea' }))
    expect(hits.map(hit => hit.record.content).sort()).toEqual(['chloé drinks tea at noon', 'chloé likes tea'])
    expect((await wholeState(workspace)).state).toEqual((await wholeState(createWorkspace({ dir }), false)).state)
  })

  it('an open whose later lines touch many scopes answers each scope as a store that never defers, in any order of use, with writes and erasures between (property)', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.record({ op: fc.constantFrom('remember', 'remember', 'supersede', 'delete', 'erase'), user: fc.constantFrom(...USERS), pick: fc.nat(), text: fc.string({ maxLength: 8 }) }), { minLength: 1, maxLength: 20 }),
      fc.array(fc.record({ user: fc.constantFrom(...USERS), op: fc.constantFrom('read', 'read', 'write', 'erase'), text: fc.string({ maxLength: 8 }) }), { minLength: 1, maxLength: 6 }),
      fc.boolean(),
      async (tail, uses, checkpointAtEnd) => {
        const dir = await logWithCheckpoint()
        // Lines after the checkpoint, by another writer (an erase without compaction: the checkpoint stays).
        const writer = store(createWorkspace({ dir }), false)
        for (const step of tail) {
          const records = (await writer.export(target(step.user))).filter(record => record.status === 'active')
          const picked = records[step.pick % Math.max(records.length, 1)]
          if (step.op === 'remember' || !picked) await writer.append(target(step.user), { kind: 'semantic', content: `${step.user} notes ${step.text}` }, { audit })
          else if (step.op === 'supersede') await writer.append(target(step.user), { kind: 'semantic', content: `${step.user} now ${step.text}`, supersedes: [picked.id] }, { audit })
          else if (step.op === 'delete') await writer.delete(target(step.user), picked.id, { audit })
          else await writer.log.write(() => [tombstone('erase', { store: 'agent', scope: Object.freeze({ ...target(step.user).scope }) }, picked, audit, undefined)], { partitions: [keyOf(step.user)] })
        }
        const { workspace, ranges } = countedWorkspace(dir)
        const opened = store(workspace)
        const never = store(createWorkspace({ dir }), false)
        const used = new Set<string>()
        let compacted = false
        for (const use of uses) {
          if (use.op === 'write') await opened.append(target(use.user), { kind: 'semantic', content: `${use.user} adds ${use.text}` }, { audit })
          if (use.op === 'erase') {
            // Erasure compacts the whole log: erase events still kept for other scopes strip their records' lines too.
            const [record] = await opened.export(target(use.user))
            if (record) compacted = await opened.hardDelete(target(use.user), record.id, { audit }) || compacted
          }
          used.add(use.user)
          expect(await opened.export(target(use.user))).toEqual(await never.export(target(use.user)))
          expect(await opened.search(target(use.user), { query: 'notes tea', limit: 100 })).toEqual(await never.search(target(use.user), { query: 'notes tea', limit: 100 }))
          // The stamp and directory, then one section per scope used.
          if (!compacted) expect(ranges).toHaveLength(1 + used.size)
        }
        // A checkpoint written while scopes still have lines kept for them holds those lines too.
        if (checkpointAtEnd) expect(await opened.log.checkpoint()).toBe(true)
        expect((await wholeState(createWorkspace({ dir }))).state).toEqual((await wholeState(createWorkspace({ dir }), false)).state)
        expect((await wholeState(workspace)).state).toEqual((await wholeState(createWorkspace({ dir }), false)).state)
        expect((await verifyLog(createWorkspace({ dir }), KEY)).ok).toBe(true)
      },
    ), { numRuns: 25 })
  })

  it('an edited section is detected when it is read: the checkpoint is ignored with a warning and the log replayed; verifyLog reports it', async () => {
    const dir = await logWithCheckpoint()
    const path = join(dir, 'memory/memory.jsonl.checkpoint')
    const text = readFileSync(path, 'utf8')
    const at = sectionLine(text, 'chloé')
    // One base64 character of chloé's compressed section changed, its directory entry kept.
    const edit = (line: string) => `${line.slice(0, 20)}${line[20] === 'A' ? 'B' : 'A'}${line.slice(21)}`
    writeFileSync(path, text.split('\n').map((line, index) => (index === at ? edit(line) : line)).join('\n'))
    const warnings: MemoryLogWarning[] = []
    const workspace = createWorkspace({ dir })
    openMemoryLog(workspace, KEY, { onWarning: warning => warnings.push(warning) })
    const adapter = store(workspace)
    // A scope whose section is intact: nothing to report.
    expect((await adapter.search(target('alice'), { query: 'tea' })).map(hit => hit.record.content)).toEqual(['alice likes tea'])
    expect(warnings).toEqual([])
    expect((await adapter.export(target('chloé'))).map(record => record.content)).toContain('chloé likes tea')
    expect(warnings.map(warning => warning.code)).toEqual(['MEMORY_LOG_CHECKPOINT_IGNORED'])
    expect(warnings[0]!.message).toContain('digest')
    const verified = await verifyLog(createWorkspace({ dir }), KEY)
    expect(verified).toMatchObject({ ok: false, firstBad: { line: 15 } })
    expect(verified.firstBad!.reason).toContain('digest')
  })

  it('verifyLog compares the state of every section with the replay, also of partitions no open served', async () => {
    const dir = await logWithCheckpoint()
    const path = join(dir, 'memory/memory.jsonl.checkpoint')
    const text = readableCheckpoint(readFileSync(path, 'utf8'))
    const at = sectionLine(text, '太郎')
    writeFileSync(path, resealCheckpoint(text.split('\n').map((line, index) => (index === at ? line.replace('太郎 owns a cat', '太郎 owns a dog') : line)).join('\n')))
    // Resealed, the edit passes every check an open makes: the open trusts it (docs/log-format.md, trust rule).
    expect((await store(createWorkspace({ dir })).export(target('太郎'))).map(record => record.content)).toContain('太郎 owns a dog')
    const verified = await verifyLog(createWorkspace({ dir }), KEY)
    expect(verified).toMatchObject({ ok: false, firstBad: { line: 15 } })
    expect(verified.firstBad!.reason).toMatch(/record "mem_[0-9a-f]{32}" differs/)
  })

  it.each([
    ['3 (plain JSON sections)', asVersion3],
    ['4 (compressed JSON sections)', asVersion4],
    ['5 (packed sections, records as a list)', asVersion5],
  ])('a checkpoint of version %s opens, serves and verifies; the next checkpoint is version 6 with those sections packed and compressed', async (_, older) => {
    const dir = await logWithCheckpoint()
    const path = join(dir, 'memory/memory.jsonl.checkpoint')
    writeFileSync(path, older(readFileSync(path, 'utf8')))
    expect(readableCheckpoint(readFileSync(path, 'utf8'))).toContain('bob likes tea')
    const warnings: MemoryLogWarning[] = []
    const workspace = createWorkspace({ dir })
    const log = openMemoryLog(workspace, KEY, { onWarning: warning => warnings.push(warning) })
    const adapter = store(workspace)
    expect((await adapter.search(target('bob'), { query: 'tea' })).map(hit => hit.record.content)).toEqual(['bob likes tea'])
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 15 })
    // Written while four older sections are not loaded: they are copied packed.
    await adapter.append(target('alice'), { kind: 'semantic', content: 'alice likes jazz' }, { audit })
    expect(await log.checkpoint()).toBe(true)
    const after = readFileSync(path, 'utf8')
    expect(JSON.parse(after.split('\n')[0]!)).toMatchObject({ v: 6 })
    expect(after).not.toContain('likes tea')
    expect(readableCheckpoint(after)).toContain('dan likes tea')
    expect((await adapter.search(target('dan'), { query: 'cat' })).map(hit => hit.record.content)).toEqual(['dan owns a cat'])
    expect(warnings).toEqual([])
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 16 })
    expect((await wholeState(createWorkspace({ dir }))).state).toEqual((await wholeState(createWorkspace({ dir }), false)).state)
  })

  it('a checkpoint written while some partitions are not loaded copies their sections; the open keeps reading them from the new one', async () => {
    const dir = await logWithCheckpoint()
    const path = join(dir, 'memory/memory.jsonl.checkpoint')
    const before = readFileSync(path, 'utf8')
    const warnings: MemoryLogWarning[] = []
    const workspace = createWorkspace({ dir })
    const log = openMemoryLog(workspace, KEY, { onWarning: warning => warnings.push(warning) })
    const adapter = store(workspace)
    await adapter.append(target('alice'), { kind: 'semantic', content: 'alice likes jazz' }, { audit })
    expect(await log.checkpoint()).toBe(true)
    const after = readFileSync(path, 'utf8')
    expect(after).not.toBe(before)
    for (const user of ['bob', 'chloé', 'dan', '太郎']) expect(after.split('\n')[sectionLine(after, user)]).toBe(before.split('\n')[sectionLine(before, user)])
    expect(await log.view(state => state.sections?.size, { partitions: [keyOf('alice')] })).toBe(4)
    // The sections not loaded now live at other offsets of the new checkpoint.
    expect((await adapter.search(target('dan'), { query: 'cat' })).map(hit => hit.record.content)).toEqual(['dan owns a cat'])
    expect(warnings).toEqual([])
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 16 })
    expect((await wholeState(createWorkspace({ dir }))).state).toEqual((await wholeState(createWorkspace({ dir }), false)).state)
  })
})

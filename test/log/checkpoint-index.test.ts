/**
 * Search indexes persisted in checkpoints (docs/log-format.md, "Checkpoints"): a restored index
 * answers every search as a fresh rebuild from the log, before and after further writes; only
 * built indexes are persisted; a version 1 checkpoint still loads; an index line that fails its
 * checks when it is read makes the whole checkpoint ignored (full replay); a cold open that replayed many lines
 * writes a checkpoint.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { deflateRawSync } from 'node:zlib'
import fc from 'fast-check'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { openMemoryLog, type MemoryLogWarning } from '../../src/memory/event-log.ts'
import { partitionKey } from '../../src/memory/records.ts'
import { createSearchIndex, restoreSearchIndex, type MemorySearchIndexSnapshot } from '../../src/memory/search-index.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryRecord, MemorySearchQuery, MemoryTarget } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { Workspace } from '../../src/workspace/types.ts'
import { readableCheckpoint, resealCheckpoint, withSectionPayload } from '../helpers/checkpoint.ts'

const KEY = 'memory:memory.jsonl'
const CHECKPOINT = 'memory:memory.jsonl.checkpoint'
const audit = { via: 'api' }
const USERS = ['alice', 'bob', 'chloé', '太郎'] as const
const target = (user: string): MemoryTarget => ({ store: 'agent', scope: { agent: 'support', user } })
const WORDS = ['coffee', 'Café', 'naïve', 'running', 'runs', 'TEA', 'tea', '東京都', '京都', 'ΩMEGA', 'straße', 'x1', 'roadtrip', '日本語のテキスト', 'don\'t', 'paintings', '3.5', '🎉']
const QUERIES: MemorySearchQuery[] = [
  { query: 'coffee' }, { query: 'cafe' }, { query: 'cofee' }, { query: 'run' }, { query: 'tea', limit: 2 },
  { query: '京都' }, { query: '東京' }, { query: 'omega' }, { query: 'road trip' }, { query: 'offe', mode: 'substring' },
  { query: 'tea', mode: 'substring', limit: 3 }, { query: '京', mode: 'substring' }, { query: 'a', mode: 'substring', limit: 100 },
  { query: 'coffee tea', tags: ['t1'] }, { query: 'tea', kinds: ['profile'] }, { query: 'running coffee', after: '2000-01-01' },
  { query: 'x1', before: '2000-01-01' }, { query: '3.5', limit: 1 }, { query: 'paintings 🎉' },
  { query: 'tea coffee', after: '2024-01-01', limit: 3 }, { query: 'tea', before: '2024-05-01', mode: 'substring' },
  { query: 'tea', after: '2024-05-01T00:00:00.001Z' }, { query: 'coffee', before: '2024-05-01T07:00:00.001Z', mode: 'substring' },
]

const tempDir = () => mkdtempSync(join(tmpdir(), 'vam-checkpoint-index-'))
const store = (workspace: Workspace, checkpointEvery?: number | false) => workspaceJsonlMemoryStore(checkpointEvery === undefined ? {} : { checkpointEvery }).create({ store: 'agent', agent: 'support', workspace, writable: true })
/** Waits for the checkpoints the log has scheduled so far (written after the turn that scheduled them). */
const settle = (...logs: Array<{ settled(): Promise<void> }>) => Promise.all(logs.map(log => log.settled()))
type Store = ReturnType<typeof store>

/** Every query of {@link QUERIES} in every scope. */
async function searchAll(adapter: Store) {
  const results: unknown[] = []
  for (const user of USERS) for (const query of QUERIES) results.push(await adapter.search(target(user), query))
  return results
}

/** Whether the partition's index in the log state of `workspace` is built (restored or searched), without building it. */
async function indexBuilt(workspace: Workspace, user: string): Promise<boolean> {
  const log = openMemoryLog(workspace, KEY)
  return log.view(state => state.indexes.get(partitionKey('agent', target(user).scope))?.snapshot?.(() => 0) !== undefined)
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

function lines(text: string): string[] {
  return text.split('\n')
}

interface Section { values: unknown; records: unknown[]; order: number[]; index: MemorySearchIndexSnapshot | null }

/** The partitions of a version 3, 4 or 5 checkpoint text, each with its parsed section. */
function sectionsOf(text: string): Array<{ key: string; section: Section }> {
  const [, directory, ...rest] = lines(readableCheckpoint(text))
  return (JSON.parse(directory!) as { partitions: Array<[string]> }).partitions.map(([key], at) => ({ key, section: JSON.parse(rest[at]!) as Section }))
}

/** The partitions whose section holds an index snapshot. */
const indexedKeys = (text: string) => sectionsOf(text).filter(({ section }) => section.index !== null).map(({ key }) => key)

/** A version 5 checkpoint of one partition written as version 2 (state line, index line with `indexDigest`), or version 1 (no index line). */
function asOlderVersion(text: string, version: 1 | 2): string {
  const [stampLine, directoryLine] = lines(text)
  const [{ key, section }] = sectionsOf(text) as [{ key: string; section: Section }]
  const head = JSON.parse(stampLine!) as Record<string, unknown>
  delete head.directoryDigest
  delete head.directoryBytes
  head.v = version
  const stateLine = JSON.stringify({ values: section.values, records: section.records, partitions: [[key, section.records.map((_, at) => at)]], erased: (JSON.parse(directoryLine!) as { erased: string[] }).erased })
  if (version === 1) return `${JSON.stringify(head)}\n${stateLine}\n`
  const indexLine = JSON.stringify({ indexes: section.index ? [[key, section.index]] : [] })
  head.indexDigest = sha256(indexLine)
  return `${JSON.stringify(head)}\n${stateLine}\n${indexLine}\n`
}

const step = fc.record({
  op: fc.constantFrom('remember', 'remember', 'remember', 'supersede', 'delete', 'erase', 'search'),
  user: fc.constantFrom(...USERS),
  pick: fc.nat(),
  words: fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }),
  extra: fc.string({ unit: 'grapheme', maxLength: 8 }),
  title: fc.option(fc.constantFrom(...WORDS), { nil: undefined }),
  tags: fc.array(fc.constantFrom('t1', 't2', 'Café'), { maxLength: 2 }),
  kind: fc.constantFrom('semantic', 'profile'),
  // Imported records keep their own creation time (ranking ties and date filters read it).
  created: fc.option(fc.constantFrom('2022-12-31T23:59:59.500Z', '2024-05-01', '2024-05-01T09:00:00+02:00', '2030-01-01T00:00:00Z'), { nil: undefined }),
})
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never

/** Applies `steps` through `adapter`; `ids` collects created ids (any scope). */
async function run(adapter: Store, steps: Step[], ids: Array<{ id: string; user: string }>) {
  for (const { op, user, pick, words, extra, title, tags, kind, created } of steps) {
    const chosen = ids[pick % Math.max(ids.length, 1)]
    const content = `${words.join(' ')} ${extra}`.trim() || 'tea'
    if (op === 'search') await adapter.search(target(user), { query: words[0]! })
    else if (op === 'remember' || !chosen) ids.push({ id: (await adapter.append(target(user), { kind, content, ...(title ? { title } : {}), tags, ...(created ? { createdAt: created } : {}) }, { audit })).id, user })
    else if (op === 'supersede') {
      const current = await adapter.read(target(chosen.user), chosen.id)
      if (current?.status === 'active') ids.push({ id: (await adapter.append(target(chosen.user), { kind, content, tags, supersedes: [chosen.id] }, { audit })).id, user: chosen.user })
    }
    else if (op === 'delete') {
      const current = await adapter.read(target(chosen.user), chosen.id)
      if (current?.status === 'active') await adapter.delete(target(chosen.user), chosen.id, { audit })
    }
    else if (await adapter.read(target(chosen.user), chosen.id)) await adapter.hardDelete(target(chosen.user), chosen.id, { audit })
  }
}

describe('search indexes in checkpoints', () => {
  it('state -> checkpoint -> load answers every search as a rebuild from the log, and still after further writes on both sides (property)', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(step, { minLength: 1, maxLength: 40 }),
      fc.array(step, { maxLength: 15 }),
      fc.array(step, { maxLength: 15 }),
      async (before, laterRestored, laterRebuilt) => {
        const storage = createStorage({ driver: memoryDriver() })
        // Checkpoints only when asked for: the one below is the checkpoint of this state.
        const live = store(createWorkspace({ storage }), 1e9)
        const ids: Array<{ id: string; user: string }> = []
        await run(live, before, ids)
        // A store in use: some partitions were searched (their index is built), others not; a
        // search of a scope without records builds an empty index, which is not persisted.
        const searched = new Set<string>()
        const held = await live.log.view(state => USERS.filter(user => state.partitions.has(partitionKey('agent', target(user).scope))))
        for (const user of held) if (await indexBuilt(live.log.workspace, user)) searched.add(user)
        const written = await live.log.checkpoint()
        const warnings: MemoryLogWarning[] = []
        const restoredWorkspace = createWorkspace({ storage })
        // The first open of a log sets its options: this one listens for warnings.
        openMemoryLog(restoredWorkspace, KEY, { onWarning: warning => warnings.push(warning) })
        const restored = store(restoredWorkspace)
        const rebuilt = store(createWorkspace({ storage }), false)
        for (const user of USERS) expect(await indexBuilt(restoredWorkspace, user)).toBe(written && searched.has(user))
        for (const user of USERS) expect(await indexBuilt(restoredWorkspace, user)).toBe(searched.has(user))
        expect(await searchAll(restored)).toEqual(await searchAll(rebuilt))
        expect(await searchAll(restored)).toEqual(await searchAll(live))
        await run(restored, laterRestored, ids)
        await run(rebuilt, laterRebuilt, ids)
        expect(await searchAll(restored)).toEqual(await searchAll(rebuilt))
        expect(warnings).toEqual([])
      },
    ), { numRuns: 60 })
  }, 120_000)

  it('a restored index takes the same snapshot again and answers as the index it was taken of', () => {
    const records: MemoryRecord[] = WORDS.map((word, n) => ({ id: `r${n}`, store: 'agent', scope: target('alice').scope, kind: 'semantic', content: `${word} ${'tea '.repeat(n)}`, ...(n % 3 === 0 ? { title: word } : {}), tags: n % 2 ? ['Café'] : [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit, createdAt: `2024-05-0${1 + (n % 9)}T00:00:00Z`, updatedAt: '2024-05-01T00:00:00Z', version: 1, status: 'active' }))
    // A term far above the inline count maximum lands in the side map of large counts.
    records.push({ ...records[0]!, id: 'big', content: 'tea '.repeat(1500) })
    const index = createSearchIndex()
    for (const record of records) index.update(record)
    index.update({ ...records[4]!, status: 'deleted', version: 2 })
    const deleted = records.map(record => (record.id === 'r4' ? { ...record, status: 'deleted' as const, version: 2 } : record))
    expect(index.snapshot!(() => 0)).toBeUndefined()
    expect(index.size).toBe(records.length - 1)
    const number = (record: MemoryRecord) => deleted.findIndex(own => own.id === record.id)
    const snapshot = index.snapshot!(number)!
    const copy = restoreSearchIndex(JSON.parse(JSON.stringify(snapshot)) as MemorySearchIndexSnapshot, deleted)
    expect(copy.snapshot!(number)).toEqual(snapshot)
    for (const query of QUERIES) expect(copy.search(query)).toEqual(index.search(query))
    const added = { ...records[1]!, id: 'new', content: 'coffee 京都 new' }
    index.update(added)
    copy.update(added)
    for (const query of QUERIES) expect(copy.search(query)).toEqual(index.search(query))
  })

  it('a snapshot that does not fit its records is refused', () => {
    const records: MemoryRecord[] = ['tea', 'coffee'].map((content, n) => ({ id: `r${n}`, store: 'agent', scope: target('alice').scope, kind: 'semantic', content, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit, createdAt: '2024-05-01T00:00:00Z', updatedAt: '2024-05-01T00:00:00Z', version: 1, status: 'active' }))
    const index = createSearchIndex()
    for (const record of records) index.update(record)
    expect(index.size).toBe(2)
    const snapshot = index.snapshot!(record => records.indexOf(record))!
    expect(() => restoreSearchIndex(snapshot, records.slice(0, 1))).toThrow(/does not match|does not index/)
    expect(() => restoreSearchIndex(snapshot, [...records, { ...records[0]!, id: 'r2' }])).toThrow(/does not index every active record/)
    expect(() => restoreSearchIndex({ ...snapshot, data: snapshot.data.slice(0, -8) }, records)).toThrow(/ends early|longer|out of range|match/)
    expect(() => restoreSearchIndex({ ...snapshot, terms: [...snapshot.terms, snapshot.terms[0]!] }, records)).toThrow(/repeats a term/)
    expect(() => restoreSearchIndex({ ...snapshot, format: '0:x' }, records)).toThrow(/format/)
  })

  it('a restored index of a small scope holds arrays sized for its records, and still takes later records', () => {
    const records: MemoryRecord[] = WORDS.slice(0, 10).map((word, n) => ({ id: `r${n}`, store: 'agent', scope: target('alice').scope, kind: 'semantic', content: `${word} tea`, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit, createdAt: '2024-05-01T00:00:00Z', updatedAt: '2024-05-01T00:00:00Z', version: 1, status: 'active' }))
    const index = createSearchIndex()
    for (const record of records) index.update(record)
    index.search({ query: 'tea' })
    const snapshot = index.snapshot!(record => records.indexOf(record))!
    global.gc?.()
    const before = process.memoryUsage().arrayBuffers
    const restored = Array.from({ length: 200 }, () => restoreSearchIndex(snapshot, records))
    const perIndex = (process.memoryUsage().arrayBuffers - before) / restored.length
    // Room for 256 slots and 256 words was about 14 KB of arrays per index; 10 records take under 4 KB.
    expect(perIndex).toBeLessThan(4 * 1024)
    const later = Array.from({ length: 40 }, (_, n) => ({ ...records[0]!, id: `later${n}`, content: `later${n} tea` }))
    for (const record of later) restored[0]!.update(record)
    expect(restored[0]!.size).toBe(50)
    expect(restored[0]!.search({ query: 'later39' }).map(hit => hit.record.id)).toEqual(['later39'])
  })

  it('a checkpoint holds the indexes of searched partitions only: writing one builds no index', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }))
    await adapter.append(target('alice'), { kind: 'semantic', content: 'likes tea' }, { audit })
    await adapter.append(target('bob'), { kind: 'semantic', content: 'likes coffee' }, { audit })
    await adapter.search(target('alice'), { query: 'tea' })
    expect(await adapter.log.checkpoint()).toBe(true)
    const text = readFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), 'utf8')
    const head = JSON.parse(lines(text)[0]!) as { v: number; directoryDigest: string }
    expect(head.v).toBe(6)
    expect(head.directoryDigest).toBe(sha256(lines(text)[1]!))
    expect(indexedKeys(text)).toEqual([partitionKey('agent', target('alice').scope)])
    expect(await indexBuilt(adapter.log.workspace, 'bob')).toBe(false)
    const opened = createWorkspace({ dir })
    expect(await indexBuilt(opened, 'alice')).toBe(true)
    expect(await indexBuilt(opened, 'bob')).toBe(false)
    expect((await store(opened).search(target('bob'), { query: 'coffee' })).map(hit => hit.record.content)).toEqual(['likes coffee'])
  })

  describe('a checkpoint of version 1, or with an index of another tokenizer format, loads and builds its indexes on first search; one of version 2 restores them', () => {
    async function searchedCheckpoint() {
      const dir = tempDir()
      const adapter = store(createWorkspace({ dir }))
      for (const content of ['likes tea', 'likes green tea', 'runs daily']) await adapter.append(target('alice'), { kind: 'semantic', content }, { audit })
      const expected = await adapter.search(target('alice'), { query: 'tea' })
      expect(await adapter.log.checkpoint()).toBe(true)
      return { dir, path: join(dir, 'memory/memory.jsonl.checkpoint'), expected }
    }
    async function openAndSearch(dir: string) {
      const warnings: MemoryLogWarning[] = []
      const workspace = createWorkspace({ dir })
      openMemoryLog(workspace, KEY, { onWarning: warning => warnings.push(warning) })
      const built = await indexBuilt(workspace, 'alice')
      const hits = await store(workspace).search(target('alice'), { query: 'tea' })
      return { warnings, built, hits }
    }

    it('version 1 (two lines)', async () => {
      const { dir, path, expected } = await searchedCheckpoint()
      writeFileSync(path, asOlderVersion(readFileSync(path, 'utf8'), 1))
      const { warnings, built, hits } = await openAndSearch(dir)
      expect(warnings).toEqual([])
      expect(built).toBe(false)
      expect(hits).toEqual(expected)
    })

    it('version 2 (state line and index line)', async () => {
      const { dir, path, expected } = await searchedCheckpoint()
      writeFileSync(path, asOlderVersion(readFileSync(path, 'utf8'), 2))
      const { warnings, built, hits } = await openAndSearch(dir)
      expect(warnings).toEqual([])
      expect(built).toBe(true)
      expect(hits).toEqual(expected)
    })

    it.each([
      [2, 'three fields per slot, no dates field'],
      [3, 'every posting value written out'],
    ])('an index of snapshot version %i (%s)', async (version) => {
      const { dir, path, expected } = await searchedCheckpoint()
      const text = readableCheckpoint(readFileSync(path, 'utf8'))
      expect(text).toMatch(/"format":"4:/)
      writeFileSync(path, resealCheckpoint(text.replace(/"format":"4:/g, `"format":"${version}:`)))
      const { warnings, built, hits } = await openAndSearch(dir)
      expect(warnings).toEqual([])
      expect(built).toBe(false)
      expect(hits).toEqual(expected)
    })

    it('another tokenizer format', async () => {
      const { dir, path, expected } = await searchedCheckpoint()
      writeFileSync(path, resealCheckpoint(readableCheckpoint(readFileSync(path, 'utf8')).replace(/"format":"[^"]*"/, '"format":"0:older"')))
      const { warnings, built, hits } = await openAndSearch(dir)
      expect(warnings).toEqual([])
      expect(built).toBe(false)
      expect(hits).toEqual(expected)
    })
  })

  describe('a section that fails its checks when it is read: the checkpoint is ignored with a warning and the log replayed, never a wrong result', () => {
    async function damaged(damage: (text: string) => string) {
      const dir = tempDir()
      const adapter = store(createWorkspace({ dir }))
      for (const content of ['likes tea', 'likes coffee', 'tea again']) await adapter.append(target('alice'), { kind: 'semantic', content }, { audit })
      const expected = await adapter.search(target('alice'), { query: 'tea' })
      expect(await adapter.log.checkpoint()).toBe(true)
      const path = join(dir, 'memory/memory.jsonl.checkpoint')
      writeFileSync(path, damage(readFileSync(path, 'utf8')))
      const warnings: MemoryLogWarning[] = []
      const workspace = createWorkspace({ dir })
      openMemoryLog(workspace, KEY, { onWarning: warning => warnings.push(warning) })
      expect(await store(workspace).search(target('alice'), { query: 'tea' })).toEqual(expected)
      expect(warnings.map(warning => warning.code)).toEqual(['MEMORY_LOG_CHECKPOINT_IGNORED'])
      return warnings[0]!.message
    }

    it('a changed character (digest)', async () => {
      // One base64 character of the compressed section changed, the directory's digest kept.
      expect(await damaged(text => lines(text).map((line, at) => (at === 2 ? `${line.slice(0, 10)}${line[10] === 'A' ? 'B' : 'A'}${line.slice(11)}` : line)).join('\n'))).toContain('digest')
    })

    it('a missing section line', async () => {
      expect(await damaged(text => lines(text).slice(0, 2).join('\n') + '\n')).toContain('shorter')
    })

    it('a snapshot whose records do not fit its partition (digests recomputed)', async () => {
      expect(await damaged(text => resealCheckpoint(readableCheckpoint(text).replace(/"slots":3/, '"slots":2')))).toContain('search index')
    })

    it('records of another partition than the directory names (digests recomputed)', async () => {
      expect(await damaged(text => resealCheckpoint(lines(readableCheckpoint(text)).map((line, at) => (at === 2 ? line.replace('"user":"alice"', '"user":"mallory"') : line)).join('\n')))).toContain('malformed')
    })

    it('a compressed section that does not inflate to its directory\'s length, or not at all (digests recomputed)', async () => {
      const section = (text: string, edit: (line: string) => string) => resealCheckpoint(lines(text).map((line, at) => (at === 2 ? edit(line) : line)).join('\n'), { asStored: true })
      const cut = await damaged(text => section(text, line => line.slice(0, Math.floor(line.length / 8) * 4)))
      expect(cut).toMatch(/section of partition .*alice.* cannot be decompressed/)
      const notBase64 = await damaged(text => section(text, line => `*${line.slice(1)}`))
      expect(notBase64).toMatch(/section of partition .*alice.* cannot be decompressed: it is not base64 text/)
      const other = await damaged(text => section(text, () => deflateRawSync('{"values":{}}').toString('base64')))
      expect(other).toMatch(/section of partition .*alice.* cannot be decompressed: it inflates to 13 bytes, not \d+/)
    })
    it('a packed payload cut short, with a word number past its words, or with bytes after its ranks and no index (digests recomputed)', async () => {
      const cut = await damaged(text => withSectionPayload(text, 0, payload => payload.subarray(0, payload.length - 40)))
      expect(cut).toMatch(/section of partition .*alice.* is malformed|search index snapshot|index data ends early/)
      // The first term's word number (right after the three ranks) made 127, past the words of one partition of three records.
      const pastWords = await damaged(text => withSectionPayload(text, 0, (payload) => {
        let at = 0
        let length = 0
        for (let scale = 1; ; scale *= 128) {
          const byte = payload[at++]!
          length += (byte & 0x7f) * scale
          if (byte < 0x80) break
        }
        const edited = Buffer.from(payload)
        edited[at + length + 3] = 127
        return edited
      }))
      expect(pastWords).toMatch(/section of partition .*alice.* is malformed/)
      const extra = await damaged(text => withSectionPayload(text, 0, payload => Buffer.concat([payload, Buffer.from([1])])))
      expect(extra).toMatch(/section of partition .*alice.* is malformed|search index snapshot has data left over/)
    })
  })

  it('erasure after a search leaves no erased word in the checkpoint\'s index line', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }))
    const secret = await adapter.append(target('alice'), { kind: 'profile', content: 'card 4111-SECRET', title: 'SECRET title', tags: ['SECRET-tag'] }, { audit })
    await adapter.append(target('alice'), { kind: 'semantic', content: 'likes tea' }, { audit })
    await adapter.search(target('alice'), { query: 'secret' })
    expect(await adapter.log.checkpoint()).toBe(true)
    expect(readableCheckpoint(readFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), 'utf8')).toLowerCase()).toContain('secret')
    expect(await adapter.hardDelete(target('alice'), secret.id, { audit })).toBe(true)
    await adapter.search(target('alice'), { query: 'tea' })
    expect(await adapter.log.checkpoint()).toBe(true)
    expect(readableCheckpoint(readFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), 'utf8')).toLowerCase()).not.toContain('secret')
  })

  it('the index of a partition that took an erase is left out of checkpoints (its tombstone still holds the words)', async () => {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }), 1e9)
    const alice = target('alice')
    const secret = await adapter.append(alice, { kind: 'profile', content: 'card 4111-SECRET' }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'likes tea' }, { audit })
    await adapter.append(target('bob'), { kind: 'semantic', content: 'likes coffee' }, { audit })
    await adapter.search(alice, { query: 'tea' })
    await adapter.search(target('bob'), { query: 'coffee' })
    // An erase event without the compaction that follows it in hardDelete (a crash in between, or another process's erase).
    await adapter.log.write(state => [{ type: 'erase', recordId: secret.id, store: 'agent', scope: alice.scope, version: state.records.get(secret.id)!.version + 1, at: new Date().toISOString(), audit }])
    expect(await adapter.log.checkpoint()).toBe(true)
    const text = readableCheckpoint(readFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), 'utf8'))
    expect(text).not.toContain('SECRET')
    expect(indexedKeys(text)).toEqual([partitionKey('agent', target('bob').scope)])
    const opened = store(createWorkspace({ dir }))
    expect(await opened.search(alice, { query: 'secret' })).toEqual([])
    expect((await opened.search(alice, { query: 'tea' })).map(hit => hit.record.content)).toEqual(['likes tea'])
  })
})

describe('a cold open that replayed many lines writes a checkpoint', () => {
  async function logWithoutCheckpoint(count: number) {
    const dir = tempDir()
    const adapter = store(createWorkspace({ dir }), false)
    for (let n = 0; n < count; n++) await adapter.append(target('alice'), { kind: 'semantic', content: `fact ${n}` }, { audit })
    return dir
  }
  const stampOf = (dir: string) => JSON.parse(lines(readFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), 'utf8'))[0]!) as { lines: number }

  it('an open that replayed checkpointEvery lines or more writes one covering them', async () => {
    const dir = await logWithoutCheckpoint(6)
    const workspace = createWorkspace({ dir })
    expect(await workspace.has(CHECKPOINT)).toBe(false)
    expect(await store(workspace, 5).export(target('alice'))).toHaveLength(6)
    await expect.poll(() => stampOf(dir).lines, { timeout: 5000 }).toBe(6)
    // The next cold open starts from it and replays nothing.
    const warnings: MemoryLogWarning[] = []
    const reopened = createWorkspace({ dir })
    const starts: number[] = []
    const readBytes = reopened.readBytes.bind(reopened)
    reopened.readBytes = async (key, start, end) => {
      if (key === KEY) starts.push(start ?? 0)
      return readBytes(key, start, end)
    }
    expect(await openMemoryLog(reopened, KEY, { onWarning: warning => warnings.push(warning) }).view(state => state.records.size)).toBe(6)
    expect(Math.min(...starts)).toBeGreaterThan(0)
    expect(warnings).toEqual([])
  })

  it('an open past a checkpoint by checkpointEvery lines or more writes a newer one', async () => {
    const dir = await logWithoutCheckpoint(2)
    expect(await store(createWorkspace({ dir })).log.checkpoint()).toBe(true)
    const writer = store(createWorkspace({ dir }), false)
    for (let n = 0; n < 5; n++) await writer.append(target('alice'), { kind: 'semantic', content: `later ${n}` }, { audit })
    expect(await store(createWorkspace({ dir }), 5).export(target('alice'))).toHaveLength(7)
    await expect.poll(() => stampOf(dir).lines, { timeout: 5000 }).toBe(7)
  })

  it('the first search that builds an index of checkpointEvery records or more writes a checkpoint holding it; a smaller one does not', async () => {
    const dir = await logWithoutCheckpoint(6)
    const small = store(createWorkspace({ dir }), 10)
    expect(await small.search(target('alice'), { query: 'fact' })).toHaveLength(6)
    await settle(small.log)
    expect(await createWorkspace({ dir }).has(CHECKPOINT)).toBe(false)
    const large = store(createWorkspace({ dir }), 6)
    await large.export(target('alice'))
    await settle(large.log)
    // The open's own checkpoint (6 lines replayed) holds no index: nothing was searched yet.
    expect(indexedKeys(readFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), 'utf8'))).toEqual([])
    expect(await large.search(target('alice'), { query: 'fact' })).toHaveLength(6)
    await expect.poll(() => indexedKeys(readFileSync(join(dir, 'memory/memory.jsonl.checkpoint'), 'utf8')), { timeout: 5000 }).toEqual([partitionKey('agent', target('alice').scope)])
  })

  it('a checkpoint written after the index was built makes the one scheduled for it unnecessary', async () => {
    const dir = await logWithoutCheckpoint(6)
    const workspace = createWorkspace({ dir })
    let writes = 0
    const replace = workspace.replace.bind(workspace)
    workspace.replace = async (key, text, options) => {
      if (key === CHECKPOINT) writes++
      return replace(key, text, options)
    }
    const adapter = store(workspace, 6)
    await adapter.export(target('alice'))
    await expect.poll(() => writes, { timeout: 5000 }).toBe(1)
    expect(await adapter.search(target('alice'), { query: 'fact' })).toHaveLength(6)
    expect(await adapter.log.checkpoint()).toBe(true)
    await expect.poll(() => writes, { timeout: 5000 }).toBe(2)
  })

  it('fewer lines than checkpointEvery, a read-only workspace, or checkpoints off: no checkpoint', async () => {
    const dir = await logWithoutCheckpoint(4)
    const few = store(createWorkspace({ dir }), 5)
    expect(await few.export(target('alice'))).toHaveLength(4)
    const readOnly = workspaceJsonlMemoryStore({ checkpointEvery: 2 }).create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir, writable: false }), writable: false })
    expect(await readOnly.export(target('alice'))).toHaveLength(4)
    const off = store(createWorkspace({ dir }), false)
    expect(await off.export(target('alice'))).toHaveLength(4)
    await settle(few.log, readOnly.log, off.log)
    expect(await createWorkspace({ dir }).has(CHECKPOINT)).toBe(false)
  })
})

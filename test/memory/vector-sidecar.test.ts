import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { afterAll, describe, expect, it } from 'vitest'
import { entryLine, parseEntry, rewriteKeyOf, rewriteWithout, workspaceVectorStore } from '../../src/memory/vector-sidecar.ts'
import { LINE_INDEX_SAVE_BYTES, lineIndexKeyOf } from '../../src/memory/vector-line-index.ts'
import { VECTOR_BLOCK_MIN_VECTORS, vectorBlockKeyOf } from '../../src/memory/vector-block.ts'
import type { Workspace } from '../../src/workspace/types.ts'
import { encodeVector, normalizeVector } from '../../src/search/vectors.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

const CHILD = fileURLToPath(new URL('./vector-rewrite-child.ts', import.meta.url))
const KEY = 'memory:memory.jsonl.vectors'
const folders: string[] = []
afterAll(() => { for (const folder of folders) rmSync(folder, { recursive: true, force: true }) })

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-sidecar-'))
  folders.push(dir)
  return dir
}

const vectorOf = (n: number, dims: number) => normalizeVector(Float32Array.from({ length: dims }, (_, i) => Math.sin(n * 31 + i)))
const lineOf = (n: number, dims: number, model = 'test/model') => `${JSON.stringify({ dims, id: `mem_${n}`, model, vector: encodeVector(vectorOf(n, dims)) })}\n`

/** Every file under `dir`, with its bytes. */
function everyFile(dir: string): Array<{ path: string; bytes: Buffer }> {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter(entry => entry.isFile()).map(entry => ({ path: join(entry.parentPath, entry.name), bytes: readFileSync(join(entry.parentPath, entry.name)) }))
}

/** The files under `dir` holding any of the erased ids or vector texts. */
function filesHoldingErased(dir: string, erased: number[], dims: number): string[] {
  const needles = erased.flatMap(n => [Buffer.from(`"mem_${n}"`), Buffer.from(encodeVector(vectorOf(n, dims)))])
  return everyFile(dir).filter(file => needles.some(needle => file.bytes.includes(needle))).map(file => file.path)
}

describe('vector sidecar erasure rewrite, streamed', () => {
  it('a sidecar many chunks long loses exactly the erased lines, keeps the others byte for byte, and no file holds an erased id or vector', async () => {
    const dir = tempDir()
    const workspace = createWorkspace({ dir })
    const dims = 64
    const all = Array.from({ length: 400 }, (_, n) => n)
    await workspace.append(KEY, all.map(n => lineOf(n, dims)).join(''))
    const erased = all.filter(n => n % 7 === 3 || n === 0 || n === 399)
    // Chunks of 4 KiB: about 11 lines each, so the rewrite takes some 40 chunks and erased lines fall at chunk edges too.
    await rewriteWithout(workspace, KEY, new Set(erased.map(n => `mem_${n}`)), 4096)
    expect(readFileSync(join(dir, 'memory', 'memory.jsonl.vectors'), 'utf8')).toBe(all.filter(n => !erased.includes(n)).map(n => lineOf(n, dims)).join(''))
    expect(filesHoldingErased(dir, erased, dims)).toEqual([])
    expect(await workspace.has(rewriteKeyOf(KEY))).toBe(false)
  })

  it('a rewrite with no line to drop leaves the sidecar untouched (same inode) and writes nothing else', async () => {
    const dir = tempDir()
    const workspace = createWorkspace({ dir })
    await workspace.append(KEY, [1, 2, 3].map(n => lineOf(n, 8)).join(''))
    const before = await workspace.stat(KEY)
    await rewriteWithout(workspace, KEY, new Set(['mem_9']), 64)
    expect(await workspace.stat(KEY)).toEqual(before)
    expect(everyFile(dir).map(file => file.path)).toEqual([join(dir, 'memory', 'memory.jsonl.vectors')])
  })

  it('a rewrite killed (SIGKILL) at any point leaves the old sidecar whole or the new one, and the next erasure leaves no erased text in any file', async () => {
    const dims = 256
    const all = Array.from({ length: 6000 }, (_, n) => n)
    const original = all.map(n => lineOf(n, dims)).join('')
    const erased = all.filter(n => n % 50 === 0)
    const rewritten = all.filter(n => !erased.includes(n)).map(n => lineOf(n, dims)).join('')
    const outcomes = new Set<string>()
    // When to kill: at once, when the replacement has its first bytes, when it is half written, never (the rewrite ends).
    const moments: Array<(written: number) => boolean> = [() => true, written => written > 0, written => written > rewritten.length / 2, () => false]
    for (const moment of moments) {
      const dir = tempDir()
      const file = join(dir, 'memory', 'memory.jsonl.vectors')
      const replacement = `${file}.rewrite`
      await createWorkspace({ dir }).append(KEY, original)
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dir, KEY, '4096', erased.map(n => `mem_${n}`).join(',')], { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] })
      const exited = new Promise(resolve => child.once('exit', resolve))
      let started = false
      child.stdout.on('data', (data: Buffer) => { if (data.toString().startsWith('start')) started = true })
      const watch = setInterval(() => {
        if (!started || child.exitCode !== null) return
        let written = 0
        try { written = statSync(replacement).size } catch { /* not made yet */ }
        if (moment(written)) child.kill('SIGKILL')
      }, 1)
      await exited
      clearInterval(watch)
      const now = readFileSync(file, 'utf8')
      expect(now === original || now === rewritten).toBe(true)
      outcomes.add(now === original ? 'old' : 'new')
      if (existsSync(replacement)) outcomes.add('killed mid-rewrite')
      // The erasure again (as the next hardDelete or retention pass runs it): every copy goes, the crash's leftover included.
      await rewriteWithout(createWorkspace({ dir }), KEY, new Set(erased.map(n => `mem_${n}`)))
      expect(readFileSync(file, 'utf8')).toBe(rewritten)
      expect(filesHoldingErased(dir, erased, dims)).toEqual([])
      expect(everyFile(dir).map(found => found.path)).toEqual([file])
    }
    // Kills landed before the rewrite, while the replacement was half written, and the rewrite also ran to its end.
    expect([...outcomes].sort()).toEqual(['killed mid-rewrite', 'new', 'old'])
  }, 120_000)
})

describe('vector sidecar fetch by record id', () => {
  it('reads the entries of the ids asked, a later line of an id winning, and skips an edited line', async () => {
    const dir = tempDir()
    const workspace = createWorkspace({ dir })
    const store = workspaceVectorStore(workspace, KEY)
    await workspace.append(KEY, [0, 1, 2, 3].map(n => lineOf(n, 8)).join('') + lineOf(1, 8, 'other/model'))
    expect((await store.fetch!('test/model', ['mem_2', 'mem_0', 'mem_9'])).map(entry => entry.id).sort()).toEqual(['mem_0', 'mem_2'])
    expect(await store.fetch!('other/model', ['mem_1', 'mem_2'])).toEqual([{ id: 'mem_1', model: 'other/model', vector: vectorOf(1, 8) }])
    // A later line of mem_2 (another vector) wins; an edited line of mem_3 is no vector.
    const later = `${JSON.stringify({ dims: 8, id: 'mem_2', model: 'test/model', vector: encodeVector(vectorOf(7, 8)) })}\n`
    await workspace.append(KEY, later + `${JSON.stringify({ dims: 8, id: 'mem_3', model: 'test/model', vector: 'AAAA' })}\n`)
    const found = await store.fetch!('test/model', ['mem_2', 'mem_3'])
    expect(found).toEqual([{ id: 'mem_2', model: 'test/model', vector: vectorOf(7, 8) }])
  })

  it('after another writer rewrote the sidecar (an erasure elsewhere), a fetch reads the new value, not the old offsets', async () => {
    const dir = tempDir()
    const store = workspaceVectorStore(createWorkspace({ dir }), KEY)
    await createWorkspace({ dir }).append(KEY, [0, 1, 2, 3].map(n => lineOf(n, 8)).join(''))
    expect(await store.fetch!('test/model', ['mem_3'])).toHaveLength(1)
    // Another process's erasure: mem_0 and mem_1 gone, every later line moved.
    writeFileSync(join(dir, 'memory', 'memory.jsonl.vectors.new'), [2, 3].map(n => lineOf(n, 8)).join(''))
    const other = createWorkspace({ dir })
    expect(await other.replaceWith(KEY, `${KEY}.new`)).toBe(true)
    expect(await store.fetch!('test/model', ['mem_0', 'mem_3'])).toEqual([{ id: 'mem_3', model: 'test/model', vector: vectorOf(3, 8) }])
  })

  it('on a store without identities (memory driver), a value replaced and grown past the indexed end is indexed again', async () => {
    const { createStorage } = await import('unstorage')
    const { default: memoryDriver } = await import('unstorage/drivers/memory')
    const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
    const store = workspaceVectorStore(workspace, KEY)
    await workspace.append(KEY, [0, 1].map(n => lineOf(n, 8)).join(''))
    expect(await store.fetch!('test/model', ['mem_1'])).toHaveLength(1)
    await workspace.replace(KEY, [5, 6, 7].map(n => lineOf(n, 16)).join(''))
    expect((await store.fetch!('test/model', ['mem_1', 'mem_6'])).map(entry => entry.id)).toEqual(['mem_6'])
  })
})

describe('vector sidecar reads by offset', () => {
  it('a fetch at the indexed offsets gives, for every line, what a JSON parse of the line gives (canonical lines, escaped ids and models, spaced or escaped lines)', async () => {
    const { createStorage } = await import('unstorage')
    const { default: memoryDriver } = await import('unstorage/drivers/memory')
    const line = fc.record({
      id: fc.string({ minLength: 1, maxLength: 8, unit: fc.constantFrom('a', 'b', '"', '\\', 'é', '😀', '_') }),
      model: fc.constantFrom('test/model', 'm"odel', 'modèle'),
      dims: fc.integer({ min: 1, max: 9 }),
      shape: fc.constantFrom('canonical', 'spaced', 'escaped vector', 'quote in vector', 'wrong dims'),
    })
    await fc.assert(fc.asyncProperty(fc.uniqueArray(line, { minLength: 1, maxLength: 12, selector: entry => `${entry.model}\n${entry.id}` }), async (lines) => {
      const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
      const texts = lines.map(({ id, model, dims, shape }) => {
        const canonical = entryLine({ id, model, vector: vectorOf(id.length, dims) }).slice(0, -1)
        if (shape === 'spaced') return canonical.replace('{"dims":', '{ "dims": ')
        if (shape === 'escaped vector') return canonical.replace(/"vector":"(.)/, (_, first: string) => `"vector":"\\u00${first.charCodeAt(0).toString(16)}`)
        if (shape === 'quote in vector') return canonical.replace(/"vector":"(.)/, '"vector":"\\"')
        return shape === 'wrong dims' ? canonical.replace(`{"dims":${dims}`, `{"dims":${dims + 1}`) : canonical
      })
      await workspace.append(KEY, texts.map(text => `${text}\n`).join(''))
      const store = workspaceVectorStore(workspace, KEY)
      // The first fetch indexes the sidecar; the next ones read at the offsets.
      await store.fetch!('none', ['none'])
      for (const [n, { id, model }] of lines.entries()) {
        const parsed = parseEntry(texts[n]!)
        expect(await store.fetch!(model, [id])).toEqual(parsed && parsed.id === id && parsed.model === model ? [parsed] : [])
      }
    }), { numRuns: 60 })
  })
})

describe('vector sidecar line index on storage', () => {
  const dims = 256
  // About 1.5 KB a line: 1,200 lines pass the size from which a scan stores its index.
  const count = 1200

  /** A workspace over `dir` that counts the bytes its `readBytes` returns from the sidecar. */
  function countingWorkspace(dir: string): { workspace: Workspace; read: () => number } {
    const inner = createWorkspace({ dir })
    let bytes = 0
    const workspace: Workspace = Object.create(inner)
    workspace.readBytes = async (key, start, end) => {
      const got = await inner.readBytes(key, start, end)
      if (key === KEY) bytes += got?.length ?? 0
      return got
    }
    return { workspace, read: () => bytes }
  }

  async function indexedSidecar(): Promise<string> {
    const dir = tempDir()
    const workspace = createWorkspace({ dir })
    await workspace.append(KEY, Array.from({ length: count }, (_, n) => lineOf(n, dims)).join(''))
    expect(statSync(join(dir, 'memory', 'memory.jsonl.vectors')).size).toBeGreaterThan(LINE_INDEX_SAVE_BYTES)
    expect(await workspaceVectorStore(workspace, KEY).fetch!('test/model', ['mem_5'])).toHaveLength(1)
    expect(await workspace.has(lineIndexKeyOf(KEY))).toBe(true)
    return dir
  }

  it('a cold process fetches a few ids through the stored line index, reading their lines and not the whole sidecar', async () => {
    const dir = await indexedSidecar()
    const size = statSync(join(dir, 'memory', 'memory.jsonl.vectors')).size
    const { workspace, read } = countingWorkspace(dir)
    const found = await workspaceVectorStore(workspace, KEY).fetch!('test/model', ['mem_3', 'mem_600', 'mem_1199', 'mem_5000'])
    expect(found.map(entry => entry.id).sort()).toEqual(['mem_1199', 'mem_3', 'mem_600'])
    expect(found.find(entry => entry.id === 'mem_600')!.vector).toEqual(vectorOf(600, dims))
    expect(read()).toBeLessThan(size / 20)
  })

  it('lines another writer appended after the stored index, a later line of an indexed id included, are found by a cold process', async () => {
    const dir = await indexedSidecar()
    const later = `${JSON.stringify({ dims, id: 'mem_7', model: 'test/model', vector: encodeVector(vectorOf(9999, dims)) })}\n`
    await createWorkspace({ dir }).append(KEY, lineOf(5000, dims) + later)
    const found = await workspaceVectorStore(createWorkspace({ dir }), KEY).fetch!('test/model', ['mem_7', 'mem_8', 'mem_5000'])
    expect(Object.fromEntries(found.map(entry => [entry.id, entry.vector]))).toEqual({ mem_7: vectorOf(9999, dims), mem_8: vectorOf(8, dims), mem_5000: vectorOf(5000, dims) })
  })

  it('a stored index of a sidecar replaced since (another writer\'s rewrite) is not used, and is removed', async () => {
    const dir = await indexedSidecar()
    writeFileSync(join(dir, 'memory', 'memory.jsonl.vectors.new'), [2, 3, 900].map(n => lineOf(n, dims)).join(''))
    expect(await createWorkspace({ dir }).replaceWith(KEY, `${KEY}.new`)).toBe(true)
    const workspace = createWorkspace({ dir })
    const found = await workspaceVectorStore(workspace, KEY).fetch!('test/model', ['mem_0', 'mem_900'])
    expect(found).toEqual([{ id: 'mem_900', model: 'test/model', vector: vectorOf(900, dims) }])
    expect(await workspace.has(lineIndexKeyOf(KEY))).toBe(false)
  })

  it('a stored index edited to put an id inside its line (not at a line start) is not trusted: the cold fetch still finds the id\'s vector', async () => {
    const dir = await indexedSidecar()
    const file = join(dir, 'memory', 'memory.jsonl.vectors.index')
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { models: Array<{ model: string; ids: string[]; starts: string; lengths: string }> }
    const model = stored.models.find(candidate => candidate.model === 'test/model')!
    const at = model.ids.indexOf('mem_600')
    const starts = new Float64Array(new Uint8Array(Buffer.from(model.starts, 'base64')).buffer)
    const lengths = new Uint32Array(new Uint8Array(Buffer.from(model.lengths, 'base64')).buffer)
    // One byte later, one byte shorter: the same end, a start inside the line.
    starts[at] = starts[at]! + 1
    lengths[at] = lengths[at]! - 1
    model.starts = Buffer.from(starts.buffer).toString('base64')
    model.lengths = Buffer.from(lengths.buffer).toString('base64')
    writeFileSync(file, JSON.stringify(stored))
    const found = await workspaceVectorStore(createWorkspace({ dir }), KEY).fetch!('test/model', ['mem_600', 'mem_3'])
    expect(Object.fromEntries(found.map(entry => [entry.id, entry.vector]))).toEqual({ mem_600: vectorOf(600, dims), mem_3: vectorOf(3, dims) })
  })

  it('an erasure rewrite removes the stored index: no file holds an erased id or vector, and a cold fetch still finds the kept lines', async () => {
    const dir = await indexedSidecar()
    const erased = [0, 5, 600, 1199]
    await rewriteWithout(createWorkspace({ dir }), KEY, new Set(erased.map(n => `mem_${n}`)))
    expect(filesHoldingErased(dir, erased, dims)).toEqual([])
    const found = await workspaceVectorStore(createWorkspace({ dir }), KEY).fetch!('test/model', ['mem_5', 'mem_6', 'mem_1198'])
    expect(found.map(entry => entry.id).sort()).toEqual(['mem_1198', 'mem_6'])
  })
})

describe('vector sidecar block of a large scope', () => {
  const dims = 64
  // About 400 bytes a line: past the size from which the line index is stored, and past the vectors from which a fetch stores a block.
  const count = VECTOR_BLOCK_MIN_VECTORS + 100
  const ids = Array.from({ length: count }, (_, n) => `mem_${n}`)
  /** The key of the block of a fetch that names no group, and its file under `dir`. */
  const blockKey = () => vectorBlockKeyOf(KEY, 'test/model', undefined)
  const blockFile = async (dir: string) => join(dir, 'memory', (await blockKey()).slice('memory:'.length))

  /** A workspace over `dir` that counts the bytes its `readBytes` returns, per key. */
  function countingWorkspace(dir: string): { workspace: Workspace; read: (key: string) => number } {
    const inner = createWorkspace({ dir })
    const bytes = new Map<string, number>()
    const workspace: Workspace = Object.create(inner)
    workspace.readBytes = async (key, start, end) => {
      const got = await inner.readBytes(key, start, end)
      bytes.set(key, (bytes.get(key) ?? 0) + (got?.length ?? 0))
      return got
    }
    return { workspace, read: key => bytes.get(key) ?? 0 }
  }

  /** A sidecar of `count` vectors, fetched whole once (so its line index and block are stored), and its folder. */
  async function blockedSidecar(): Promise<string> {
    const dir = tempDir()
    const workspace = createWorkspace({ dir })
    await workspace.append(KEY, ids.map((_, n) => lineOf(n, dims)).join(''))
    expect(await workspaceVectorStore(workspace, KEY).fetch!('test/model', ids)).toHaveLength(count)
    expect(await workspace.has(lineIndexKeyOf(KEY))).toBe(true)
    expect(await workspace.has(await blockKey())).toBe(true)
    return dir
  }

  it('a cold process fetching a large scope gets its vectors from the stored block, its float32 bytes as they are, without reading the sidecar\'s lines', async () => {
    const dir = await blockedSidecar()
    const block = readFileSync(await blockFile(dir))
    const head = JSON.parse(block.subarray(0, block.indexOf(10)).toString('utf8')) as { encoding: string; ids: string[] }
    expect([head.encoding, head.ids.length]).toEqual(['float32le', count])
    const { workspace, read } = countingWorkspace(dir)
    const found = await workspaceVectorStore(workspace, KEY).fetch!('test/model', ids)
    expect(found).toHaveLength(count)
    for (const n of [0, 1, 2048, count - 1]) expect(found.find(entry => entry.id === `mem_${n}`)!.vector).toEqual(vectorOf(n, dims))
    // The sidecar itself: only the last bytes before the stored ends, whose digest the index and block keep.
    expect(read(KEY)).toBeLessThanOrEqual(3 * 4096)
    expect(read(await blockKey())).toBeGreaterThanOrEqual(count * dims * 4)
  })

  it('a later line of an id, appended after the block was stored, wins over the block\'s vector', async () => {
    const dir = await blockedSidecar()
    await createWorkspace({ dir }).append(KEY, `${JSON.stringify({ dims, id: 'mem_7', model: 'test/model', vector: encodeVector(vectorOf(99_999, dims)) })}\n`)
    const found = await workspaceVectorStore(createWorkspace({ dir }), KEY).fetch!('test/model', ids)
    expect(found).toHaveLength(count)
    expect(found.find(entry => entry.id === 'mem_7')!.vector).toEqual(vectorOf(99_999, dims))
    expect(found.find(entry => entry.id === 'mem_8')!.vector).toEqual(vectorOf(8, dims))
  })

  it('a block of a sidecar replaced since (another writer\'s rewrite) is not used, and is removed', async () => {
    const dir = await blockedSidecar()
    writeFileSync(join(dir, 'memory', 'memory.jsonl.vectors.new'), [2, 3, 900].map(n => lineOf(n + 1, dims).replace(`"mem_${n + 1}"`, `"mem_${n}"`)).join(''))
    expect(await createWorkspace({ dir }).replaceWith(KEY, `${KEY}.new`)).toBe(true)
    const workspace = createWorkspace({ dir })
    const found = await workspaceVectorStore(workspace, KEY).fetch!('test/model', ids)
    expect(Object.fromEntries(found.map(entry => [entry.id, entry.vector]))).toEqual({ mem_2: vectorOf(3, dims), mem_3: vectorOf(4, dims), mem_900: vectorOf(901, dims) })
    expect(await workspace.has(await blockKey())).toBe(false)
  })

  it('an erasure rewrite removes the stored block: no file holds an erased id, vector text or vector bytes, and a cold fetch still finds the kept vectors', async () => {
    const dir = await blockedSidecar()
    const erased = [0, 5, 2048, count - 1]
    await rewriteWithout(createWorkspace({ dir }), KEY, new Set(erased.map(n => `mem_${n}`)))
    expect(filesHoldingErased(dir, erased, dims)).toEqual([])
    const bytes = erased.map(n => Buffer.from(vectorOf(n, dims).buffer))
    expect(everyFile(dir).filter(file => bytes.some(needle => file.bytes.includes(needle))).map(file => file.path)).toEqual([])
    const found = await workspaceVectorStore(createWorkspace({ dir }), KEY).fetch!('test/model', ids)
    expect(found).toHaveLength(count - erased.length)
    expect(found.find(entry => entry.id === 'mem_6')!.vector).toEqual(vectorOf(6, dims))
  })

  it('an erasure rewrite removes what a crash mid-write of the block or the line index leaves (their sibling .tmp files holding erased ids and vectors)', async () => {
    const dir = await blockedSidecar()
    // What a process killed between writing the sibling and renaming it over the value leaves (fs replace).
    for (const file of [await blockFile(dir), join(dir, 'memory', 'memory.jsonl.vectors.index')]) writeFileSync(`${file}.4242.1700000000000.tmp`, readFileSync(file))
    const erased = [0, 5, 2048]
    await rewriteWithout(createWorkspace({ dir }), KEY, new Set(erased.map(n => `mem_${n}`)))
    expect(filesHoldingErased(dir, erased, dims)).toEqual([])
    expect(readdirSync(join(dir, 'memory')).sort()).toEqual(['memory.jsonl.vectors'])
  })

  it('on a workspace that holds text (memory driver) the block is stored as base64 and read back the same', async () => {
    const { createStorage } = await import('unstorage')
    const { default: memoryDriver } = await import('unstorage/drivers/memory')
    const storage = createStorage({ driver: memoryDriver() })
    const workspace = createWorkspace({ storage })
    await workspace.append(KEY, ids.map((_, n) => lineOf(n, dims)).join(''))
    expect(await workspaceVectorStore(workspace, KEY).fetch!('test/model', ids)).toHaveLength(count)
    const block = await workspace.readText(await blockKey())
    expect(JSON.parse(block!.slice(0, block!.indexOf('\n'))).encoding).toBe('base64')
    // Another workspace object over the same storage: a cold store, its vectors from the block.
    const found = await workspaceVectorStore(createWorkspace({ storage }), KEY).fetch!('test/model', ids)
    expect(found).toHaveLength(count)
    expect(found.find(entry => entry.id === 'mem_4000')!.vector).toEqual(vectorOf(4000, dims))
  })
})

/**
 * Real faults against the SQLite store's FTS5 index written after the lines
 * (src/memory/stores/sqlite/fts-tail.ts): a process SIGKILLed while it indexes a tail of several
 * batches, once its first batch is committed; and supersede, delete and erasure of records whose postings were never written, by a
 * process other than the one that wrote them. The index is read back from the file itself: every
 * active record indexed exactly once, nothing else, the mark at the head.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteMemoryStore } from '../../src/capabilities/index.ts'
import { INDEX_BATCH } from '../../src/memory/stores/sqlite/fts-tail.ts'
import type { MemoryAudit, MemoryTarget } from '../../src/memory/types.ts'

const CHILD = fileURLToPath(new URL('../memory/stores/sqlite-child.ts', import.meta.url))
const audit: MemoryAudit = { via: 'api', agent: 'support' }
const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const folders: string[] = []
const factories: Array<{ close(): Promise<void> }> = []
afterAll(async () => {
  for (const factory of factories) await factory.close()
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

function databaseFile(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-fts-tail-'))
  folders.push(dir)
  writeFileSync(join(dir, 'go'), '')
  return join(dir, 'memory.db')
}

function store(file: string) {
  const factory = sqliteMemoryStore({ file, busyTimeoutMs: 20000 })
  factories.push(factory)
  return factory
}

/** Starts the child of the SQLite tests (`sqlite-child.ts`); resolves with its output and the signal that ended it. */
function child(file: string, count: string, tag: string) {
  const process_ = spawn(process.execPath, ['--import', 'tsx', CHILD, file, count, tag, join(file, '..', 'go')], { stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  process_.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
  process_.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const ended = new Promise<{ out: string; err: string; signal: NodeJS.Signals | null }>(resolve => process_.on('exit', (_code, signal) => resolve({ out, err, signal })))
  return { process: process_, ended }
}

/** What the file's FTS5 index holds, read with a connection of this test: the mark, the head, the active record rows, the rows with postings (`docs`) and how many postings are held twice. */
function indexState(file: string) {
  const db = new Database(file, { readonly: true })
  try {
    const mark = db.prepare('SELECT (SELECT indexed_seq FROM memory_fts_state) AS indexed, (SELECT max(seq) FROM memory_events) AS head').get() as { indexed: number; head: number }
    const active = (db.prepare(`SELECT seq FROM memory_events WHERE status = 'active' ORDER BY seq`).all() as Array<{ seq: number }>).map(row => row.seq)
    const docs = (db.prepare('SELECT DISTINCT doc FROM memory_fts_instance ORDER BY doc').all() as Array<{ doc: number }>).map(row => row.doc)
    const twice = (db.prepare('SELECT count(*) AS n FROM (SELECT doc, term, col, offset FROM memory_fts_instance GROUP BY doc, term, col, offset HAVING count(*) > 1)').get() as { n: number }).n
    return { ...mark, active, docs, twice }
  }
  finally {
    db.close()
  }
}

describe('SQLite FTS5 tail under real faults', () => {
  it('a process SIGKILLed after the first of several batches of the tail it indexes leaves a mark the next search continues from: every record indexed once, found, the chain verifies', async () => {
    const file = databaseFile()
    const count = INDEX_BATCH * 3 + 500
    // A writer that dies right after its last acknowledged write: the whole tail is unindexed.
    const writer = await child(file, String(count), 'unindexed').ended
    expect([writer.signal, writer.out]).toEqual(['SIGKILL', `done ${count}\n`])
    expect(indexState(file)).toMatchObject({ indexed: 0, head: count })

    const searcher = child(file, 'unindexed fact', 'search')
    // Killed as soon as its first batch is committed (read here without a lock: WAL readers never
    // wait), so the kill lands in a later batch's transaction or between two.
    const watcher = new Database(file, { readonly: true })
    try {
      while ((watcher.prepare('SELECT indexed_seq AS indexed FROM memory_fts_state').get() as { indexed: number }).indexed === 0) await new Promise(resolve => setImmediate(resolve))
      searcher.process.kill('SIGKILL')
    }
    finally {
      watcher.close()
    }
    expect((await searcher.ended).signal).toBe('SIGKILL')
    const killed = indexState(file)
    expect(killed.indexed % INDEX_BATCH).toBe(0)
    expect(killed.indexed).toBeLessThan(count)
    expect(killed.indexed).toBeGreaterThan(0)

    const factory = store(file)
    const hits = await factory.create().search(alice, { query: 'unindexed fact 4321' })
    expect(hits[0]?.record.content).toBe('unindexed fact 4321')
    const after = indexState(file)
    expect(after).toMatchObject({ indexed: count, head: count, twice: 0 })
    expect(after.active).toHaveLength(count)
    expect(after.docs).toEqual(after.active)
    expect(await factory.verify()).toEqual({ ok: true, lines: count })
  }, 180_000)

  it('records of another process\'s unindexed tail superseded, deleted and erased here are never indexed nor found; the erased text is nowhere in the files; the rest is found', async () => {
    const file = databaseFile()
    const writer = await child(file, '6', 'unindexed').ended
    expect(writer.signal).toBe('SIGKILL')
    const factory = store(file)
    const adapter = factory.create()
    const records = await adapter.export(alice)
    expect(records.map(record => record.content)).toEqual(Array.from({ length: 6 }, (_, n) => `unindexed fact ${n}`))
    const [superseded, deleted, erased] = records
    // Three later events on records of the tail, before any search indexed it.
    await adapter.append(alice, { kind: 'semantic', content: 'a corrected fact', supersedes: [superseded!.id] }, { audit })
    await adapter.delete(alice, deleted!.id, { audit })
    expect(await adapter.hardDelete(alice, erased!.id, { audit })).toBe(true)
    expect(indexState(file)).toMatchObject({ indexed: 0 })

    const found = (await adapter.search(alice, { query: 'unindexed fact', limit: 20 })).map(hit => hit.record.content).sort()
    expect(found).toEqual(['a corrected fact', 'unindexed fact 3', 'unindexed fact 4', 'unindexed fact 5'])
    expect((await adapter.search(alice, { query: 'corrected' })).map(hit => hit.record.content)).toEqual(['a corrected fact'])
    const state = indexState(file)
    expect(state).toMatchObject({ indexed: state.head, twice: 0 })
    const db = new Database(file, { readonly: true })
    const seqOf = (id: string) => (db.prepare('SELECT seq FROM memory_events WHERE record_id = ? AND status IS NOT NULL').get(id) as { seq: number }).seq
    const gone = [superseded!, deleted!, erased!].map(record => seqOf(record.id))
    db.close()
    expect(state.docs.filter(seq => gone.includes(seq))).toEqual([])
    expect(state.docs).toEqual(state.active)
    expect(state.active).toHaveLength(4)
    await factory.close()
    for (const path of [file, `${file}-wal`]) {
      if (existsSync(path)) expect(readFileSync(path).includes(Buffer.from('unindexed fact 2'))).toBe(false)
    }
    expect(await store(file).verify()).toMatchObject({ ok: true })
  }, 120_000)
})

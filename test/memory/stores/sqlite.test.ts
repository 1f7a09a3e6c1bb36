import { spawn } from 'node:child_process'
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import { createStorage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { afterAll, describe, expect, it } from 'vitest'
import { sqliteMemoryStore, workspaceJsonlMemoryStore } from '../../../src/capabilities/index.ts'
import { verifyLog } from '../../../src/memory/event-log.ts'
import type { MemoryAudit, MemoryRecord, MemoryStoreAdapter, MemoryStoreContext, MemoryTarget } from '../../../src/memory/types.ts'
import { testMemoryStore } from '../../../src/testing/index.ts'
import { createWorkspace } from '../../../src/workspace/workspace.ts'
import { killDbChildMidWrite, runTsChild } from '../../helpers/db-child.ts'
import { fillCommonTermsScope } from '../../helpers/common-terms.ts'
import { expectTurnsDuring } from '../../helpers/event-loop-turns.ts'
import { INDEX_DELAY_MS } from '../../../src/memory/stores/sqlite/fts-tail.ts'
import { synonymRanking } from '../../helpers/synonym-scope.ts'
import { applyMemoryRetention, eraseMemoryScope } from '../../../src/memory/retention.ts'

const audit: MemoryAudit = { via: 'api', agent: 'support', runId: 'run_1', threadId: 'thread_1' }
const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const bob: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'bob' } }
const CHILD = fileURLToPath(new URL('./sqlite-child.ts', import.meta.url))

const folders: string[] = []
const factories: Array<{ close(): Promise<void> }> = []
afterAll(async () => {
  for (const factory of factories) await factory.close()
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-sqlite-'))
  folders.push(dir)
  return dir
}

function store(file = join(tempDir(), 'memory.db')) {
  const factory = sqliteMemoryStore({ file })
  factories.push(factory)
  return factory
}

/** Runs the child script once to its end (`go` already there) and returns its output. */
function runChild(file: string, count: string, tag: string, go = join(tempDir(), 'go')): Promise<string> {
  if (!existsSync(go)) writeFileSync(go, '')
  return runTsChild(CHILD, [file, count, tag, go], tag)
}

function context(workspace?: MemoryStoreContext['workspace']): MemoryStoreContext {
  return { store: 'agent', agent: 'support', writable: true, ...(workspace ? { workspace } : {}) }
}

function fsWorkspace(dir: string) {
  return createWorkspace({ storage: createStorage({ driver: fsDriver({ base: dir }) }) })
}

function rows(file: string): Array<{ seq: number; type: string; record_id: string; line: string }> {
  const db = new Database(file, { readonly: true })
  try {
    return db.prepare('SELECT seq, type, record_id, line FROM memory_events ORDER BY seq').all() as Array<{ seq: number; type: string; record_id: string; line: string }>
  }
  finally {
    db.close()
  }
}

testMemoryStore('sqliteMemoryStore', () => store().create(), { describe, it, expect })

describe('sqliteMemoryStore options', () => {
  it('an unknown option key is an error, not ignored', () => {
    expect(() => sqliteMemoryStore({ file: 'x.db', busyTimout: 1 } as never)).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_OPTIONS_INVALID' }))
  })

  it.each([
    [{}, 'needs `file`'],
    [{ file: '  ' }, 'needs `file`'],
    [{ file: ':memory:' }, 'file path'],
    [{ file: 'x.db', busyTimeoutMs: -1 }, 'busyTimeoutMs'],
    [{ file: 'x.db', busyTimeoutMs: 1.5 }, 'busyTimeoutMs'],
  ])('options %j are rejected with MEMORY_STORE_OPTIONS_INVALID', (options, why) => {
    expect(() => sqliteMemoryStore(options as never)).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_OPTIONS_INVALID', why: expect.stringContaining(why) }))
  })

  it('file is resolved to an absolute path and the kind is sqlite', () => {
    const factory = sqliteMemoryStore({ file: 'relative/memory.db' })
    expect(factory.kind).toBe('sqlite')
    expect(factory.file).toBe(join(process.cwd(), 'relative', 'memory.db'))
  })

  it('a database in a missing folder fails with MEMORY_SQLITE_OPEN_FAILED and a fix', async () => {
    const adapter = store(join(tempDir(), 'missing', 'memory.db')).create()
    await expect(adapter.export(alice)).rejects.toMatchObject({ code: 'MEMORY_SQLITE_OPEN_FAILED', fix: expect.stringContaining('folder') })
  })

  it('the database runs in WAL mode with the busy timeout', async () => {
    const factory = store()
    await factory.create().append(alice, { kind: 'semantic', content: 'wal' }, { audit })
    const db = new Database(factory.file)
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal')
    db.close()
    expect(existsSync(`${factory.file}-wal`)).toBe(true)
  })
})

describe('sqliteMemoryStore open', () => {
  it('a cold open and its first search prepare the statements that search runs and no write statement', async () => {
    const file = join(tempDir(), 'memory.db')
    const writer = sqliteMemoryStore({ file })
    await writer.create().append(alice, { kind: 'semantic', content: 'tea with lemon' }, { audit })
    await writer.close()
    // The store loads better-sqlite3 with require: the same module, so its connections prepare through this prototype.
    const prepare = Database.prototype.prepare
    const prepared: string[] = []
    Database.prototype.prepare = function (this: Database.Database, source: string) {
      prepared.push(source)
      return prepare.call(this, source)
    } as typeof prepare
    try {
      const factory = store(file)
      const hits = await factory.create().search(alice, { query: 'tea' })
      expect(hits.map(hit => hit.record.content)).toEqual(['tea with lemon'])
    }
    finally {
      Database.prototype.prepare = prepare
    }
    expect(prepared.length).toBeGreaterThan(0)
    expect(prepared.filter(source => /^\s*(INSERT|UPDATE|DELETE|BEGIN|COMMIT)/i.test(source))).toEqual([])
    expect(prepared.length).toBeLessThan(12)
  })
})

describe('sqliteMemoryStore table', () => {
  it('each event is one row holding the JSONL line with seq, prev and digest, chained', async () => {
    const factory = store()
    const adapter = factory.create()
    const first = await adapter.append(alice, { kind: 'profile', content: 'likes jazz' }, { audit })
    const second = await adapter.append(alice, { kind: 'profile', content: 'likes blues', supersedes: [first.id] }, { audit })
    await adapter.delete(alice, second.id, { audit, reason: 'wrong' })
    const table = rows(factory.file)
    expect(table.map(row => [row.seq, row.type, row.record_id])).toEqual([
      [1, 'remember', first.id],
      [2, 'remember', second.id],
      [3, 'supersede', first.id],
      [4, 'delete', second.id],
    ])
    const events = table.map(row => JSON.parse(row.line) as Record<string, unknown>)
    expect(events.map(event => event.seq)).toEqual([1, 2, 3, 4])
    expect(events[0]).toMatchObject({ prev: null, content: 'likes jazz', store: 'agent', scope: alice.scope })
    for (let index = 1; index < events.length; index++) expect(events[index]!.prev).toBe(events[index - 1]!.digest)
    expect(await factory.verify()).toEqual({ ok: true, lines: 4 })
  })

  it('records persist: a new connection to the file reads them', async () => {
    const factory = store()
    const saved = await factory.create().append(alice, { kind: 'semantic', content: 'durable' }, { audit })
    await factory.close()
    const reopened = store(factory.file).create()
    expect(await reopened.read(alice, saved.id)).toEqual(saved)
  })

  it('a line edited in the table fails verification', async () => {
    const factory = store()
    const adapter = factory.create()
    await adapter.append(alice, { kind: 'semantic', content: 'original text' }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'second' }, { audit })
    await factory.close()
    const db = new Database(factory.file)
    db.prepare('UPDATE memory_events SET line = replace(line, \'original text\', \'forged text!\') WHERE seq = 1').run()
    db.close()
    // A version 3 line's payload digest is computed from what it holds: the line's digest no longer matches.
    expect(await factory.verify()).toMatchObject({ ok: false, firstBad: { line: 1, reason: expect.stringMatching(/digest does not match/) } })
  })

  it('a read of a record whose line was broken by hand fails with MEMORY_SQLITE_FAILED, and verify names the row', async () => {
    const factory = store()
    const adapter = factory.create()
    const saved = await adapter.append(alice, { kind: 'semantic', content: 'soon broken' }, { audit })
    await factory.close()
    const db = new Database(factory.file)
    db.prepare('UPDATE memory_events SET line = \'not json\' WHERE seq = 1').run()
    db.close()
    await expect(adapter.read(alice, saved.id)).rejects.toMatchObject({ code: 'MEMORY_SQLITE_FAILED', fix: expect.stringMatching(/verify/) })
    expect(await factory.verify()).toMatchObject({ ok: false, firstBad: { line: 1 } })
  })

  it('record ids are mem_ and 32 hex digits led by the time in ms, distinct, and a scope object reused or changed by the caller is stored as it was at the write', async () => {
    const factory = store()
    const adapter = factory.create()
    const scope = { agent: 'support', user: 'carol' }
    const before = Date.now()
    const saved: MemoryRecord[] = []
    for (let n = 0; n < 600; n++) saved.push(await adapter.append({ store: 'agent', scope }, { kind: 'semantic', content: `note ${n}` }, { audit }))
    const after = Date.now()
    scope.user = 'dave'
    const ids = saved.map(record => record.id)
    expect(new Set(ids).size).toBe(600)
    for (const id of ids) {
      expect(id).toMatch(/^mem_[0-9a-f]{32}$/)
      const ms = Number.parseInt(id.slice(4, 16), 16)
      expect(ms >= before && ms <= after).toBe(true)
    }
    // The record handed back holds its own copy of the scope.
    expect(saved[0]!.scope).toEqual({ agent: 'support', user: 'carol' })
    expect(Object.isFrozen(saved[0]!.scope)).toBe(false)
    expect((await adapter.export({ store: 'agent', scope: { agent: 'support', user: 'carol' } })).map(record => record.id)).toEqual(ids)
    expect(await adapter.export({ store: 'agent', scope })).toEqual([])
    expect(await factory.verify()).toEqual({ ok: true, lines: 600 })
  })

  it('a failed supersede writes no row', async () => {
    const factory = store()
    const adapter = factory.create()
    await adapter.append(alice, { kind: 'semantic', content: 'a' }, { audit })
    await expect(adapter.append(alice, { kind: 'semantic', content: 'b', supersedes: ['mem_nope'] }, { audit })).rejects.toMatchObject({ code: 'MEMORY_SUPERSEDE_NOT_FOUND' })
    expect(rows(factory.file)).toHaveLength(1)
    const next = await adapter.append(alice, { kind: 'semantic', content: 'c' }, { audit })
    expect(rows(factory.file).map(row => row.record_id)).toEqual([expect.any(String), next.id])
    expect(await factory.verify()).toEqual({ ok: true, lines: 2 })
  })

  it('two factories of one file in one process share the records', async () => {
    const first = store()
    const second = store(first.file)
    const saved = await first.create().append(alice, { kind: 'semantic', content: 'shared' }, { audit })
    expect((await second.create().search(alice, { query: 'shared' })).map(hit => hit.record.id)).toEqual([saved.id])
  })

  it('a connection sees rows another process committed since its last operation', async () => {
    const factory = store()
    const adapter = factory.create()
    await adapter.append(alice, { kind: 'semantic', content: 'mine' }, { audit })
    expect(await adapter.search(alice, { query: 'fact' })).toEqual([])
    await runChild(factory.file, '3', 'other')
    expect((await adapter.search(alice, { query: 'other fact' })).map(hit => hit.record.content).sort()).toEqual(['other fact 0', 'other fact 1', 'other fact 2'])
    const next = await adapter.append(alice, { kind: 'semantic', content: 'after them' }, { audit })
    expect(rows(factory.file).at(-1)).toMatchObject({ seq: 5, record_id: next.id })
    expect(await factory.verify()).toEqual({ ok: true, lines: 5 })
  })
})

describe('sqliteMemoryStore and the JSONL store are interchangeable', () => {
  it('exportLog gives a JSONL log that verifies and that the JSONL store reads as the same records', async () => {
    const factory = store()
    const adapter = factory.create()
    const a = await adapter.append(alice, { kind: 'profile', content: 'ünïcödé ✓ 🎉', tags: ['t'], metadata: { z: 1, a: [2] } }, { audit })
    const b = await adapter.append(alice, { kind: 'semantic', content: 'newer', supersedes: [a.id] }, { audit })
    await adapter.append(bob, { kind: 'semantic', content: 'bob' }, { audit })
    await adapter.delete(alice, b.id, { audit, reason: 'gone' })
    const text = await factory.exportLog()
    const dir = tempDir()
    writeFileSync(join(dir, 'memory.jsonl'), text)
    const workspace = fsWorkspace(dir)
    expect(await verifyLog(workspace, 'memory.jsonl')).toEqual({ ok: true, lines: 5 })
    const jsonl = await workspaceJsonlMemoryStore({ path: 'memory.jsonl' }).create(context(workspace))
    expect(await jsonl.export(alice)).toEqual(await adapter.export(alice))
    expect(await jsonl.export(bob)).toEqual(await adapter.export(bob))
  })

  it('importLog takes a JSONL log byte for byte and the SQLite store reads the same records', async () => {
    const dir = tempDir()
    const jsonl = await workspaceJsonlMemoryStore().create(context(fsWorkspace(dir)))
    const one = await jsonl.append(alice, { kind: 'semantic', content: 'one' }, { audit })
    await jsonl.append(alice, { kind: 'semantic', content: 'two', supersedes: [one.id] }, { audit })
    const text = readFileSync(join(dir, 'memory', 'memory.jsonl'), 'utf8')
    const factory = store()
    expect(await factory.importLog(text)).toBe(3)
    expect(await factory.exportLog()).toBe(text)
    const adapter = factory.create()
    expect(await adapter.export(alice)).toEqual(await jsonl.export(alice))
    // The chain continues from the imported lines.
    await adapter.append(alice, { kind: 'semantic', content: 'three' }, { audit })
    expect(await factory.verify()).toEqual({ ok: true, lines: 4 })
  })

  it('importLog refuses a corrupt log and a database that has events, writing nothing', async () => {
    const factory = store()
    await expect(factory.importLog('{"v":1,"seq":1}\n')).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT' })
    expect(rows(factory.file)).toEqual([])
    await factory.create().append(alice, { kind: 'semantic', content: 'x' }, { audit })
    const other = store()
    await other.create().append(alice, { kind: 'semantic', content: 'y' }, { audit })
    await expect(factory.importLog(await other.exportLog())).rejects.toMatchObject({ code: 'MEMORY_SQLITE_NOT_EMPTY' })
    expect(rows(factory.file)).toHaveLength(1)
  })
})

describe('sqliteMemoryStore erasure', () => {
  it('hardDelete removes the record\'s content from the table, the database file and its WAL, and the chain still verifies', async () => {
    const factory = store()
    const adapter = factory.create()
    const secret = await adapter.append(alice, { kind: 'semantic', content: 'my card number is 4111-SECRET-7777' }, { audit })
    const kept = await adapter.append(alice, { kind: 'semantic', content: 'kept fact' }, { audit })
    expect(await adapter.hardDelete(alice, secret.id, { audit })).toBe(true)
    expect(await adapter.read(alice, secret.id)).toBeUndefined()
    expect(await adapter.search(alice, { query: 'SECRET' })).toEqual([])
    expect((await adapter.export(alice)).map(record => record.id)).toEqual([kept.id])
    expect(rows(factory.file).some(row => row.line.includes('4111-SECRET'))).toBe(false)
    await factory.close()
    for (const path of [factory.file, `${factory.file}-wal`]) {
      if (existsSync(path)) expect(readFileSync(path).includes('4111-SECRET')).toBe(false)
    }
    expect(await factory.verify()).toMatchObject({ ok: true })
  })

  it('a connection forgets a record another process erased (compaction bumps the generation)', async () => {
    const factory = store()
    const adapter = factory.create()
    const saved = await adapter.append(alice, { kind: 'semantic', content: 'erase me elsewhere' }, { audit })
    expect((await adapter.read(alice, saved.id))?.content).toBe('erase me elsewhere')
    await runChild(factory.file, saved.id, 'erase')
    expect(await adapter.read(alice, saved.id)).toBeUndefined()
    expect(rows(factory.file).some(row => row.line.includes('erase me elsewhere'))).toBe(false)
    expect(await factory.verify()).toMatchObject({ ok: true, lines: 2 })
  })
})

describe('sqliteMemoryStore across processes', () => {
  it('two child processes remembering 100 records each into one file give 200 records, a gap-free seq and a chain that verifies', async () => {
    const dir = tempDir()
    const file = join(dir, 'memory.db')
    const go = join(dir, 'go')
    const children = ['left', 'right'].map(tag => runChild(file, '100', tag, go))
    // Let both children open the database before they start (the table is created on open).
    await new Promise(resolve => setTimeout(resolve, 1500))
    writeFileSync(go, '')
    expect(await Promise.all(children)).toEqual(['done 100\n', 'done 100\n'])
    const table = rows(file)
    expect(table.map(row => row.seq)).toEqual(Array.from({ length: 200 }, (_, index) => index + 1))
    const factory = store(file)
    expect(await factory.verify()).toEqual({ ok: true, lines: 200 })
    const records: MemoryStoreAdapter = factory.create()
    const exported = await records.export(alice)
    expect(exported).toHaveLength(200)
    const contents = new Set(exported.map(record => record.content))
    for (const tag of ['left', 'right']) for (let n = 0; n < 100; n++) expect(contents.has(`${tag} fact ${n}`)).toBe(true)
  }, 60_000)

  it('a remember after another process appended is chained after that process\'s line, though this process wrote the line before it', async () => {
    const file = join(tempDir(), 'memory.db')
    const factory = store(file)
    const adapter = factory.create()
    await adapter.append(alice, { kind: 'semantic', content: 'first, from here' }, { audit: { via: 'api' } })
    // The child appends seq 2 after the line this process wrote (and whose head it keeps).
    expect(await runChild(file, '1', 'other')).toBe('done 1\n')
    const third = await adapter.append(alice, { kind: 'semantic', content: 'third, from here' }, { audit: { via: 'api' } })
    const table = rows(file)
    expect(table.map(row => [row.seq, row.record_id])).toEqual([[1, table[0]!.record_id], [2, table[1]!.record_id], [3, third.id]])
    const lines = table.map(row => JSON.parse(row.line) as { prev: string | null; digest: string; content: string })
    expect(lines.map(line => line.content)).toEqual(['first, from here', 'other fact 0', 'third, from here'])
    expect(lines[2]!.prev).toBe(lines[1]!.digest)
    expect(await factory.verify()).toEqual({ ok: true, lines: 3 })
  }, 60_000)
})

/** `indexed_seq` of the FTS5 index and the last `seq` of the file. */
function ftsMark(file: string): { indexed: number; head: number } {
  const db = new Database(file, { readonly: true })
  try {
    return db.prepare('SELECT (SELECT indexed_seq FROM memory_fts_state) AS indexed, (SELECT max(seq) FROM memory_events) AS head').get() as { indexed: number; head: number }
  }
  finally {
    db.close()
  }
}

/** Runs the child with tag `unindexed` (it kills itself with SIGKILL after its last write) and resolves with its output. */
function runUnindexedChild(file: string, count: number): Promise<string> {
  const go = join(tempDir(), 'go')
  writeFileSync(go, '')
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file, String(count), 'unindexed', go], { stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (chunk: Buffer) => { out += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { err += chunk.toString() })
    child.on('exit', (_code, signal) => (signal === 'SIGKILL' ? resolve(out) : reject(new Error(`child ended without SIGKILL: ${err}`))))
  })
}

describe('sqliteMemoryStore FTS5 index written after the lines', () => {
  it('records another process wrote and never indexed (killed after its writes) are found by the next ranked search here, scored as in a store indexed at write', async () => {
    const file = join(tempDir(), 'memory.db')
    const factory = store(file)
    const adapter = factory.create()
    await adapter.append(alice, { kind: 'semantic', content: 'an indexed fact about tea' }, { audit })
    await adapter.search(alice, { query: 'tea' })
    expect(await runUnindexedChild(file, 20)).toBe('done 20\n')
    // The child's records are in the lines only: the FTS5 index stops before them.
    expect(ftsMark(file)).toEqual({ indexed: 1, head: 21 })
    const hits = (await adapter.search(alice, { query: 'unindexed fact tea' })).map(hit => [hit.record.content, hit.score])
    expect(ftsMark(file)).toEqual({ indexed: 21, head: 21 })
    // The same log imported into a new file is indexed as it is written.
    const reference = store(join(tempDir(), 'reference.db'))
    await reference.importLog(await factory.exportLog())
    expect(hits).toHaveLength(10)
    expect(hits).toEqual((await reference.create().search(alice, { query: 'unindexed fact tea' })).map(hit => [hit.record.content, hit.score]))
    expect(await factory.verify()).toEqual({ ok: true, lines: 21 })
  }, 60_000)

  it('a process that never wrote finds, by a ranked search, the records another process left unindexed', async () => {
    const file = join(tempDir(), 'memory.db')
    await store(file).create().search(alice, { query: 'warm up' })
    expect(await runUnindexedChild(file, 5)).toBe('done 5\n')
    expect(ftsMark(file)).toEqual({ indexed: 0, head: 5 })
    const lines = (await runChild(file, 'unindexed fact', 'search')).trim().split('\n').map(line => JSON.parse(line) as [string, number])
    expect(lines.map(([content]) => content).sort()).toEqual(Array.from({ length: 5 }, (_, n) => `unindexed fact ${n}`))
    expect(ftsMark(file)).toEqual({ indexed: 5, head: 5 })
  }, 60_000)

  it('the records a process wrote are indexed on an idle turn after its writes, without a search', async () => {
    const file = join(tempDir(), 'memory.db')
    const adapter = store(file).create()
    for (let n = 0; n < 3; n++) await adapter.append(alice, { kind: 'semantic', content: `idle fact ${n}` }, { audit })
    expect(ftsMark(file)).toEqual({ indexed: 0, head: 3 })
    await new Promise(resolve => setTimeout(resolve, 200))
    expect(ftsMark(file)).toEqual({ indexed: 3, head: 3 })
  })

  it.each([['before', false], ['after', true]])('a record erased %s the FTS5 index took it leaves nothing of it in a row or in the files', async (_when, indexedFirst) => {
    const factory = store()
    const adapter = factory.create()
    const kept = await adapter.append(alice, { kind: 'semantic', content: 'alice keeps qwmpfact' }, { audit })
    const secret = await adapter.append(alice, { kind: 'semantic', content: 'alice secret zqxjvv', tags: ['zqxjvvtag'] }, { audit })
    if (indexedFirst) expect((await adapter.search(alice, { query: 'zqxjvv' })).map(hit => hit.record.id)).toEqual([secret.id])
    expect(await adapter.hardDelete(alice, secret.id, { audit })).toBe(true)
    expect(await adapter.search(alice, { query: 'zqxjvv' })).toEqual([])
    expect((await adapter.search(alice, { query: 'qwmpfact' })).map(hit => hit.record.id)).toEqual([kept.id])
    await factory.close()
    const db = new Database(factory.file, { readonly: true })
    try {
      for (const { name } of db.prepare('SELECT name FROM sqlite_master WHERE type = \'table\'').all() as Array<{ name: string }>) {
        for (const row of db.prepare(`SELECT * FROM "${name}"`).raw().all() as unknown[][]) expect(row.some(value => String(value).includes('zqxjvv') || (Buffer.isBuffer(value) && value.includes('zqxjvv')))).toBe(false)
      }
    }
    finally {
      db.close()
    }
    for (const path of [factory.file, `${factory.file}-wal`]) if (existsSync(path)) expect(readFileSync(path).includes('zqxjvv')).toBe(false)
    expect(await store(factory.file).verify()).toMatchObject({ ok: true, lines: 3 })
  })
})

describe('sqliteMemoryStore faults', () => {
  it('a process killed with SIGKILL in the middle of a write keeps every acknowledged write, and the chain verifies', async () => {
    const file = join(tempDir(), 'memory.db')
    await store(file).create().search(alice, { query: 'warm up' })
    const acknowledged = await killDbChildMidWrite('sqlite', file, 30, 'killed')
    const factory = store(file)
    const contents = new Set((await factory.create().export(alice)).map(record => record.content))
    for (const content of acknowledged) expect(contents.has(content)).toBe(true)
    expect(contents.size - acknowledged.length).toBeLessThanOrEqual(1)
    expect(await factory.verify()).toEqual({ ok: true, lines: contents.size })
  }, 60_000)

  it('a transaction that fails after inserting its line is rolled back: nothing of it is visible', async () => {
    const factory = store()
    const adapter = factory.create()
    const kept = await adapter.append(alice, { kind: 'semantic', content: 'before the fault' }, { audit })
    await factory.close()
    // A real fault inside the write: a trigger raises after the event row went in.
    const db = new Database(factory.file)
    db.exec('CREATE TRIGGER boom AFTER INSERT ON memory_events WHEN NEW.line LIKE \'%boom%\' BEGIN SELECT RAISE(ABORT, \'injected fault\'); END')
    db.close()
    await expect(adapter.append(alice, { kind: 'semantic', content: 'boom now' }, { audit })).rejects.toMatchObject({ code: 'MEMORY_SQLITE_FAILED' })
    expect(rows(factory.file)).toHaveLength(1)
    expect((await adapter.export(alice)).map(record => record.id)).toEqual([kept.id])
    expect(await adapter.search(alice, { query: 'boom' })).toEqual([])
    const after = await adapter.append(alice, { kind: 'semantic', content: 'after the fault' }, { audit })
    expect(rows(factory.file).map(row => row.record_id)).toEqual([kept.id, after.id])
    expect(await factory.verify()).toEqual({ ok: true, lines: 2 })
  })

  it('a database of schema 1 (events only) is upgraded on open: same records, searchable, chain continues', async () => {
    const dir = tempDir()
    const jsonl = await workspaceJsonlMemoryStore().create(context(fsWorkspace(dir)))
    const one = await jsonl.append(alice, { kind: 'semantic', content: 'old tea fact' }, { audit })
    await jsonl.append(alice, { kind: 'semantic', content: 'old coffee fact', supersedes: [one.id] }, { audit })
    const file = join(dir, 'old.db')
    const db = new Database(file)
    db.exec('CREATE TABLE memory_events (seq INTEGER PRIMARY KEY, type TEXT NOT NULL, record_id TEXT NOT NULL, store TEXT NOT NULL, partition TEXT NOT NULL, digest TEXT NOT NULL, line TEXT NOT NULL); CREATE TABLE memory_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL); PRAGMA user_version = 1;')
    const insert = db.prepare('INSERT INTO memory_events VALUES (?, ?, ?, ?, ?, ?, ?)')
    for (const line of readFileSync(join(dir, 'memory', 'memory.jsonl'), 'utf8').trim().split('\n')) {
      const event = JSON.parse(line)
      insert.run(event.seq, event.type, event.recordId, event.store, '', event.digest, line)
    }
    db.close()
    const adapter = store(file).create()
    expect(await adapter.export(alice)).toEqual(await jsonl.export(alice))
    expect((await adapter.search(alice, { query: 'coffee' })).map(hit => hit.record.content)).toEqual(['old coffee fact'])
    await adapter.append(alice, { kind: 'semantic', content: 'new fact' }, { audit })
    expect(await store(file).verify()).toEqual({ ok: true, lines: 4 })
  })
})

/** The columns of `memory_events` in schema 4: the line, and the record columns of a `remember` row. */
const EVENT_COLUMNS = ['seq', 'type', 'record_id', 'digest', 'line', 'partition', 'status', 'created_ms', 'content_hash', 'title_len', 'content_len', 'tags_len', 'later', 'haystack']

describe('sqliteMemoryStore schema 2 files', () => {
  // fixtures/sqlite-schema-2.db was written by the schema 2 store (commit bdfe82f): records with
  // tags, a title, a supersede, an episode and an event time, upper-case non-ASCII text, a delete
  // and an erase, in two scopes.
  const FIXTURE = fileURLToPath(new URL('./fixtures/sqlite-schema-2.db', import.meta.url))

  function copyFixture(): string {
    const file = join(tempDir(), 'memory.db')
    copyFileSync(FIXTURE, file)
    return file
  }

  it('a schema 2 file is upgraded on open: the records it held, searchable, the chain continues and verifies', async () => {
    const file = copyFixture()
    const old = new Database(file, { readonly: true })
    const held = (old.prepare('SELECT partition, record FROM memory_records WHERE record IS NOT NULL ORDER BY seq').all() as Array<{ partition: string; record: string }>).map(row => JSON.parse(row.record) as MemoryRecord)
    const lines = (old.prepare('SELECT line FROM memory_events ORDER BY seq').all() as Array<{ line: string }>).map(row => row.line)
    old.close()
    const factory = store(file)
    const adapter = factory.create()
    for (const target of [alice, bob]) {
      expect(await adapter.export(target)).toEqual(held.filter(record => record.scope.user === target.scope.user))
    }
    expect(await factory.exportLog()).toBe(lines.map(line => `${line}\n`).join(''))
    expect((await adapter.search(alice, { query: 'oolong' })).map(hit => hit.record.content)).toEqual(['Alice likes oolong tea now'])
    expect((await adapter.search(alice, { query: 'école', mode: 'substring' })).map(hit => hit.record.content)).toEqual(['ÉCOLE Über straße'])
    expect((await adapter.search(alice, { query: 'old town', mode: 'substring' })).map(hit => hit.record.content)).toEqual(['Trip to Lyon'])
    expect((await adapter.search(bob, { query: 'weekend' })).map(hit => hit.record.content)).toEqual(['Bob plays the piano on the weekend'])
    await adapter.append(bob, { kind: 'semantic', content: 'Bob after the upgrade' }, { audit })
    expect(await factory.verify()).toEqual({ ok: true, lines: lines.length + 1 })
    const db = new Database(file, { readonly: true })
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(5)
      const tables = (db.prepare('SELECT name FROM sqlite_master WHERE type = \'table\'').all() as Array<{ name: string }>).map(row => row.name)
      expect(tables.filter(name => name.endsWith('_v2') || name === 'memory_records')).toEqual([])
      expect(db.prepare('SELECT name FROM sqlite_master WHERE name = \'memory_events_upgrade\'').all()).toEqual([])
      expect((db.prepare('SELECT name FROM pragma_table_info(\'memory_events\')').all() as Array<{ name: string }>).map(row => row.name)).toEqual(EVENT_COLUMNS)
    }
    finally {
      db.close()
    }
  })

  it('an upgrade that fails part way leaves the schema 2 file as it was', async () => {
    const file = copyFixture()
    const db = new Database(file)
    const before = db.prepare('SELECT * FROM memory_records ORDER BY seq').all()
    // A real fault late in the upgrade: a view naming the column the upgrade drops makes DROP COLUMN fail.
    db.exec('CREATE VIEW event_stores AS SELECT store FROM memory_events')
    db.close()
    await expect(store(file).create().search(alice, { query: 'tea' })).rejects.toMatchObject({ code: 'MEMORY_SQLITE_OPEN_FAILED' })
    const after = new Database(file, { readonly: true })
    try {
      expect(after.pragma('user_version', { simple: true })).toBe(2)
      expect(after.prepare('SELECT * FROM memory_records ORDER BY seq').all()).toEqual(before)
      expect((after.prepare('SELECT name FROM sqlite_master WHERE type = \'table\' AND name LIKE \'%_v2\'').all())).toEqual([])
    }
    finally {
      after.close()
    }
  })

  it('a record of an upgraded file is erased from every line, and the superseded one it replaced stays readable', async () => {
    const file = copyFixture()
    const factory = store(file)
    const adapter = factory.create()
    const [tea, newer] = await adapter.export(alice)
    expect(tea).toMatchObject({ status: 'superseded', supersededBy: newer!.id })
    expect(await adapter.read(alice, tea!.id)).toEqual(tea)
    expect(await adapter.hardDelete(alice, newer!.id, { audit })).toBe(true)
    expect(await adapter.search(alice, { query: 'oolong' })).toEqual([])
    await factory.close()
    for (const path of [file, `${file}-wal`]) if (existsSync(path)) expect(readFileSync(path).includes('oolong')).toBe(false)
    expect(await store(file).verify()).toMatchObject({ ok: true })
  })
})

describe('sqliteMemoryStore schema 3 files', () => {
  // fixtures/sqlite-schema-3.db was written by the schema 3 store (commit 9f6eb0f): a supersede
  // with a title, tags, an episode and an event time, upper-case non-ASCII text with keywords, an
  // erase, and a delete, in two scopes.
  const FIXTURE = fileURLToPath(new URL('./fixtures/sqlite-schema-3.db', import.meta.url))

  function copyFixture(): string {
    const file = join(tempDir(), 'memory.db')
    copyFileSync(FIXTURE, file)
    return file
  }

  /** The records of the fixture's lines as the JSONL store reads them. */
  async function jsonlOf(file: string) {
    const old = new Database(file, { readonly: true })
    const text = (old.prepare('SELECT line FROM memory_events ORDER BY seq').all() as Array<{ line: string }>).map(row => `${row.line}\n`).join('')
    old.close()
    const dir = tempDir()
    const workspace = fsWorkspace(dir)
    await workspace.append('memory/memory.jsonl', text)
    return { text, jsonl: await workspaceJsonlMemoryStore().create(context(workspace)) }
  }

  it('a schema 3 file is upgraded on open: the records it held, searchable, the chain continues and verifies', async () => {
    const file = copyFixture()
    const { text, jsonl } = await jsonlOf(file)
    const factory = store(file)
    const adapter = factory.create()
    for (const target of [alice, bob]) expect(await adapter.export(target)).toEqual(await jsonl.export(target))
    expect(await factory.exportLog()).toBe(text)
    expect((await adapter.search(alice, { query: 'oolong' })).map(hit => hit.record.content)).toEqual(['Alice likes oolong tea now'])
    expect((await adapter.search(alice, { query: 'école', mode: 'substring' })).map(hit => hit.record.content)).toEqual(['ÉCOLE Über straße'])
    expect((await adapter.search(alice, { query: 'old town', mode: 'substring' })).map(hit => hit.record.content)).toEqual(['Trip to Lyon'])
    expect((await adapter.search(bob, { query: 'weekend' })).map(hit => hit.record.content)).toEqual(['Bob plays the piano on the weekend'])
    expect(await adapter.search(alice, { query: 'secret' })).toEqual([])
    const guitar = (await jsonl.export(bob)).find(record => record.status === 'deleted')!
    expect(await adapter.read(bob, guitar.id)).toEqual(guitar)
    await adapter.append(bob, { kind: 'semantic', content: 'Bob after the upgrade' }, { audit })
    expect(await factory.verify()).toEqual({ ok: true, lines: text.split('\n').length })
    const db = new Database(file, { readonly: true })
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(5)
      expect(db.prepare('SELECT name FROM sqlite_master WHERE name = \'memory_records\'').all()).toEqual([])
      expect((db.prepare('SELECT name FROM pragma_table_info(\'memory_events\')').all() as Array<{ name: string }>).map(row => row.name)).toEqual(EVENT_COLUMNS)
    }
    finally {
      db.close()
    }
  })

  it('an upgrade that fails part way leaves the schema 3 file as it was', async () => {
    const file = copyFixture()
    const db = new Database(file)
    const before = db.prepare('SELECT * FROM memory_records ORDER BY seq').all()
    // A real fault late in the upgrade: a table holding the name of the index it creates.
    db.exec('CREATE TABLE memory_events_partition (x)')
    db.close()
    await expect(store(file).create().search(alice, { query: 'tea' })).rejects.toMatchObject({ code: 'MEMORY_SQLITE_OPEN_FAILED' })
    const after = new Database(file, { readonly: true })
    try {
      expect(after.pragma('user_version', { simple: true })).toBe(3)
      expect(after.prepare('SELECT * FROM memory_records ORDER BY seq').all()).toEqual(before)
      expect((after.prepare('SELECT name FROM pragma_table_info(\'memory_events\')').all() as Array<{ name: string }>).map(row => row.name)).toEqual(['seq', 'type', 'record_id', 'digest', 'line'])
    }
    finally {
      after.close()
    }
  })

  it('a record of an upgraded schema 3 file is erased from every line, and the superseded one it replaced stays readable', async () => {
    const file = copyFixture()
    const factory = store(file)
    const adapter = factory.create()
    const [tea, newer] = await adapter.export(alice)
    expect(tea).toMatchObject({ status: 'superseded', supersededBy: newer!.id })
    expect(await adapter.hardDelete(alice, newer!.id, { audit })).toBe(true)
    expect(await adapter.read(alice, tea!.id)).toEqual(tea)
    expect(await adapter.search(alice, { query: 'oolong' })).toEqual([])
    await factory.close()
    for (const path of [file, `${file}-wal`]) if (existsSync(path)) expect(readFileSync(path).includes('oolong')).toBe(false)
    expect(await store(file).verify()).toMatchObject({ ok: true })
  })
})

describe('sqliteMemoryStore schema 4 files with date words', () => {
  // fixtures/sqlite-schema-4-event-time.db was written by the schema 4 store (commit 7d27768), whose content
  // terms and substring text held the date words of `occurredAt`: in scope alice a record with
  // occurredAt 2023-06-03 (a Saturday) and one created 2023-05-08 without it; in scope bob a record
  // created 2023-05-09 whose content says "Tuesday", and a deleted one.
  const FIXTURE = fileURLToPath(new URL('./fixtures/sqlite-schema-4-event-time.db', import.meta.url))
  const alice4: MemoryTarget = { store: 'agent', scope: { user: 'alice' } }
  const bob4: MemoryTarget = { store: 'agent', scope: { user: 'bob' } }

  it('a schema 4 file is upgraded on open: date words leave the substring text and are ranked in the dates column, the chain verifies', async () => {
    const file = join(tempDir(), 'memory.db')
    copyFileSync(FIXTURE, file)
    const factory = store(file)
    const adapter = factory.create()
    const contents = async (target: MemoryTarget, query: string, mode?: 'substring') => (await adapter.search(target, { query, ...(mode ? { mode } : {}) })).map(hit => hit.record.content)
    expect(await contents(alice4, 'june', 'substring')).toEqual([])
    expect(await contents(alice4, 'saturday', 'substring')).toEqual([])
    expect(await contents(alice4, 'June 2023 Saturday')).toEqual(['Caroline went to a support group', 'hello world'])
    expect(await contents(alice4, 'May 2023')).toEqual(['hello world', 'Caroline went to a support group'])
    expect(await contents(bob4, 'tuesday', 'substring')).toEqual(['Bob plays the piano on Tuesday evenings'])
    expect(await contents(bob4, 'coffee')).toEqual([])
    expect(await factory.verify()).toMatchObject({ ok: true })
    await factory.close()
    const db = new Database(file, { readonly: true })
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(5)
      expect((db.prepare('SELECT name FROM pragma_table_info(\'memory_fts\')').all() as Array<{ name: string }>).map(row => row.name)).toEqual(['title', 'content', 'tags', 'dates'])
    }
    finally {
      db.close()
    }
  })
})

describe('sqliteMemoryStore schema 4 files', () => {
  // fixtures/sqlite-schema-4.db was written by the schema 4 store (main 7d27768), which indexed
  // each record in the transaction that wrote it: a supersede with a title, tags, an episode and
  // an event time, non-ASCII text with keywords, an erase, and a delete, in two scopes.
  const FIXTURE = fileURLToPath(new URL('./fixtures/sqlite-schema-4.db', import.meta.url))

  function copyFixture(): string {
    const file = join(tempDir(), 'memory.db')
    copyFileSync(FIXTURE, file)
    return file
  }

  it('a schema 4 file is upgraded on open: its index counts as complete, the records are found, the chain continues and verifies', async () => {
    const file = copyFixture()
    const factory = store(file)
    const adapter = factory.create()
    expect((await adapter.search(alice, { query: 'oolong' })).map(hit => hit.record.content)).toEqual(['Alice likes oolong tea now'])
    expect((await adapter.search(alice, { query: 'schule' })).map(hit => hit.record.content)).toEqual(['ÉCOLE Über straße'])
    expect((await adapter.search(alice, { query: 'old town', mode: 'substring' })).map(hit => hit.record.content)).toEqual(['Trip to Lyon'])
    expect((await adapter.search(bob, { query: 'weekend' })).map(hit => hit.record.content)).toEqual(['Bob plays the piano on the weekend'])
    expect(await adapter.search(alice, { query: 'secret' })).toEqual([])
    expect(ftsMark(file)).toEqual({ indexed: 10, head: 10 })
    await adapter.append(bob, { kind: 'semantic', content: 'Bob after the upgrade' }, { audit })
    expect((await adapter.search(bob, { query: 'upgrade' })).map(hit => hit.record.content)).toEqual(['Bob after the upgrade'])
    expect(await factory.verify()).toEqual({ ok: true, lines: 11 })
    const db = new Database(file, { readonly: true })
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(5)
      expect((db.prepare('SELECT name FROM pragma_table_info(\'memory_events\')').all() as Array<{ name: string }>).map(row => row.name)).toEqual(EVENT_COLUMNS)
    }
    finally {
      db.close()
    }
  })

  it('an upgrade that fails part way leaves the schema 4 file as it was', async () => {
    const file = copyFixture()
    const db = new Database(file)
    // A real fault in the upgrade: a table of the name it creates, without its columns.
    db.exec('CREATE TABLE memory_fts_state (x)')
    db.close()
    await expect(store(file).create().search(alice, { query: 'tea' })).rejects.toMatchObject({ code: 'MEMORY_SQLITE_OPEN_FAILED' })
    const after = new Database(file, { readonly: true })
    try {
      expect(after.pragma('user_version', { simple: true })).toBe(4)
      expect(after.prepare('SELECT * FROM memory_fts_state').all()).toEqual([])
    }
    finally {
      after.close()
    }
  })
})

describe('sqliteMemoryStore retention', () => {
  it('eraseMemoryScope erases every record of the scope from the tables and the file; other scopes stay; the chain verifies', async () => {
    const factory = store()
    const adapter = factory.create()
    await adapter.append(alice, { kind: 'semantic', content: 'alice secret ZQXJ-1' }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'alice secret ZQXJ-2' }, { audit })
    const kept = await adapter.append(bob, { kind: 'semantic', content: 'bob keeps this' }, { audit })
    expect(await eraseMemoryScope(adapter, alice, { audit })).toMatchObject({ erased: 2 })
    expect(await eraseMemoryScope(adapter, alice, { audit })).toMatchObject({ erased: 0 })
    expect(await adapter.export(alice)).toEqual([])
    expect(await adapter.search(alice, { query: 'secret' })).toEqual([])
    expect((await adapter.export(bob)).map(record => record.id)).toEqual([kept.id])
    await factory.close()
    for (const path of [factory.file, `${factory.file}-wal`]) {
      if (existsSync(path)) expect(readFileSync(path).includes('ZQXJ')).toBe(false)
    }
    expect(await factory.verify()).toEqual({ ok: true, lines: 5 })
  })

  it('retention.maxItems expires the oldest active records of the scope', async () => {
    const adapter = store().create()
    const first = await adapter.append(alice, { kind: 'semantic', content: 'one', createdAt: '2024-01-01T00:00:00Z' }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'two', createdAt: '2024-01-02T00:00:00Z' }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'three', createdAt: '2024-01-03T00:00:00Z' }, { audit })
    const result = await applyMemoryRetention(adapter, alice, { maxItems: 2, hardDelete: false }, { audit })
    expect(result).toEqual({ deleted: [first.id], erased: [] })
    expect((await adapter.export(alice)).map(record => [record.content, record.status])).toEqual([['one', 'deleted'], ['two', 'active'], ['three', 'active']])
  })
})

describe('sqliteMemoryStore scope statistics', () => {
  it('the statistics a connection keeps follow its own writes and another process\'s: scores equal those of a fresh connection', async () => {
    const factory = store()
    const adapter = factory.create()
    const first = await adapter.append(alice, { kind: 'semantic', content: 'tea with milk' }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'green tea and coffee', title: 'tea' }, { audit })
    const scores = async () => (await factory.create().search(alice, { query: 'tea coffee' })).map(hit => [hit.record.content, hit.score])
    await scores()
    await adapter.append(alice, { kind: 'semantic', content: 'coffee only' }, { audit })
    await adapter.delete(alice, first.id, { audit })
    await runChild(factory.file, '2', 'other tea')
    const warm = await scores()
    await factory.close()
    expect(await scores()).toEqual(warm)
    expect(warm.map(([content]) => content)).toContain('other tea fact 1')
  })
})

describe('sqliteMemoryStore top-k cut of the ranking', () => {
  it('in a scope larger than the cut, the records holding every query word rank first though each word is common', async () => {
    const adapter = store().create()
    const { allThree } = await fillCommonTermsScope(adapter, alice, audit)
    const hits = await adapter.search(alice, { query: 'weekend garden sunset', limit: 10 })
    expect(new Set(hits.slice(0, 3).map(hit => hit.record.id))).toEqual(new Set(allThree))
  })

  it('when the filters leave too few of the candidates, every match is ranked: the oldest records of the one kind asked for are found', async () => {
    const adapter = store().create()
    const { procedural } = await fillCommonTermsScope(adapter, alice, audit)
    const hits = await adapter.search(alice, { query: 'weekends', kinds: ['procedural'], limit: 10 })
    expect(hits.map(hit => hit.record.id).sort()).toEqual([...procedural].sort())
  })
})

describe('sqliteMemoryStore ranking', () => {
  it('a query word finds a record holding only a word of its synonym group, below the word itself, at the synonym weight', async () => {
    const adapter = store().create()
    const { contents, bySynonym, byOwnWord, weight } = await synonymRanking(adapter, alice, audit)
    expect(contents).toEqual(['the kids played football after school', 'my children love the park'])
    expect(bySynonym).toBeCloseTo(weight * byOwnWord, 3)
  })
})

describe('sqliteMemoryStore substring rule', () => {
  it('counts occurrences per field as the default search does: none across fields, NUL and U+0001 in text are text', async () => {
    const adapter = store().create()
    const across = await adapter.append(alice, { kind: 'semantic', title: 'ab', content: 'cd' }, { audit })
    const odd = await adapter.append(alice, { kind: 'semantic', content: 'x\u0000y x\u0001y bc' }, { audit })
    expect((await adapter.search(alice, { query: 'bc', mode: 'substring' })).map(hit => hit.record.id)).toEqual([odd.id])
    expect((await adapter.search(alice, { query: 'x\u0001y', mode: 'substring' })).map(hit => [hit.record.id, hit.score])).toEqual([[odd.id, 1]])
    expect((await adapter.search(alice, { query: 'x\u0000y', mode: 'substring' })).map(hit => [hit.record.id, hit.score])).toEqual([[odd.id, 1]])
    expect((await adapter.search(alice, { query: 'AB', mode: 'substring' })).map(hit => hit.record.id)).toEqual([across.id])
  })
})

describe('sqliteMemoryStore and the event loop', () => {
  it('an awaited loop of 2,000 appends (better-sqlite3 writes synchronously) lets interval and timeout callbacks run while it goes on', async () => {
    const adapter = store().create()
    await adapter.append(alice, { kind: 'semantic', content: 'the first note opens the database' }, { audit })
    await expectTurnsDuring(async () => {
      for (let index = 0; index < 2_000; index++) await adapter.append(alice, { kind: 'semantic', content: `note number ${index} of the burst` }, { audit })
    })
    expect(await adapter.export(alice)).toHaveLength(2_001)
  })

  it('a burst that gives the event loop turns is indexed once it stops, as one tail, not while it goes on', async () => {
    const file = join(tempDir(), 'memory.db')
    const adapter = store(file).create()
    await adapter.append(alice, { kind: 'semantic', content: 'the first note opens the database' }, { audit })
    await new Promise(resolve => setTimeout(resolve, INDEX_DELAY_MS * 5))
    const reader = new Database(file, { readonly: true })
    try {
      const indexed = () => (reader.prepare('SELECT indexed_seq AS seq FROM memory_fts_state').get() as { seq: number }).seq
      expect(indexed()).toBe(1)
      const elapsed = await expectTurnsDuring(async () => {
        for (let index = 0; index < 1_500; index++) await adapter.append(alice, { kind: 'semantic', content: `note number ${index} of the burst` }, { audit })
      })
      expect(elapsed).toBeGreaterThan(INDEX_DELAY_MS * 2)
      expect(indexed()).toBe(1)
      const deadline = Date.now() + 5_000
      while (indexed() !== 1_501 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 5))
      expect(indexed()).toBe(1_501)
    }
    finally {
      reader.close()
    }
  })
})

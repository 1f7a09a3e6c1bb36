/**
 * Retention (`maxAge`, `maxItems` with `hardDelete`), `eraseMemoryScope` and `importMemoryScope`
 * on both SQL stores, one suite run against SQLite and against Postgres: the scope writes of
 * sql/core.ts. Erasure is checked on every row of every table (and, for SQLite, on the bytes of
 * the database file and its WAL), the way the trust tests byte-scan the JSONL files.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { afterAll, describe, expect, it } from 'vitest'
import { resolveMemoryStore } from '../../../src/memory/capability.ts'
import { sha256HexSync, serializeEvent } from '../../../src/log/index.ts'
import { memoryFold, verifyLog } from '../../../src/memory/event-log.ts'
import { applyMemoryRetention, eraseMemoryScope, exportMemoryScope, hardDeleteMemoryRecord, importMemoryScope } from '../../../src/memory/retention.ts'
import { parseMemoryOptions } from '../../../src/memory/schemas.ts'
import { postgresMemoryStore } from '../../../src/memory/stores/postgres.ts'
import { versionsNotRemovable } from '../../../src/memory/stores/postgres/erasure-vacuum.ts'
import { sqliteMemoryStore } from '../../../src/memory/stores/sqlite.ts'
import { workspaceJsonlMemoryStore } from '../../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryAudit, MemoryRecord, MemoryRecordInput, MemoryStoreAdapter, MemoryStoreFactory, MemoryStoreOptions, MemoryTarget } from '../../../src/memory/types.ts'
import { createWorkspace } from '../../../src/workspace/workspace.ts'
import { POSTGRES_SKIP_HINT, postgresTestDatabases } from '../../helpers/postgres.ts'

const ANN = { agent: 'support', user: 'ann' }
const target: MemoryTarget = { store: 'agent', scope: ANN }
const other: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'bob' } }
const api = { audit: { via: 'api' } }
const note = (content: string, extra: Partial<MemoryRecordInput> = {}): MemoryRecordInput => ({ kind: 'semantic', content, ...extra })

/** One SQL store under test: its factory and every byte of it an erasure must reach. */
interface SqlStoreUnderTest {
  factory: MemoryStoreFactory & { exportLog(): Promise<string>; importLog(text: string): Promise<number>; verify(): Promise<{ ok: boolean }> }
  adapter: MemoryStoreAdapter
  /** Every row of every table as text (SQLite: also the database file and its WAL, as latin1). */
  dump(): Promise<string>
}

const folders: string[] = []
afterAll(() => { for (const folder of folders) rmSync(folder, { recursive: true, force: true }) })

async function openSqlite(): Promise<SqlStoreUnderTest> {
  const dir = mkdtempSync(join(tmpdir(), 'vam-sql-retention-'))
  folders.push(dir)
  const file = join(dir, 'memory.db')
  const factory = sqliteMemoryStore({ file })
  return {
    factory,
    adapter: factory.create(),
    async dump() {
      const db = new Database(file, { readonly: true })
      let text = ''
      try {
        for (const { name } of db.prepare('SELECT name FROM sqlite_master WHERE type = \'table\'').all() as Array<{ name: string }>) {
          if (name === 'memory_fts' || name === 'memory_fts_instance') continue
          for (const row of db.prepare(`SELECT * FROM "${name}"`).all() as Array<Record<string, unknown>>) {
            text += `${name}: ${Object.values(row).map(value => (Buffer.isBuffer(value) ? value.toString('latin1') : String(value))).join(' | ')}\n`
          }
        }
      }
      finally {
        db.close()
      }
      for (const path of [file, `${file}-wal`]) if (existsSync(path)) text += readFileSync(path).toString('latin1')
      return text
    },
  }
}

const postgres = await postgresTestDatabases('vam_ret')

async function openPostgres(): Promise<SqlStoreUnderTest> {
  const url = await postgres.fresh()
  const factory = postgresMemoryStore({ connectionString: url })
  postgres.onClose(() => factory.close())
  const adapter = factory.create()
  return { factory, adapter, dump: () => postgres.dump(url) }
}

/** The store `agent` with these options over `adapter`, resolved for user ann as an invocation resolves it. */
async function resolved(options: Omit<MemoryStoreOptions, 'scope'>): Promise<MemoryStoreAdapter> {
  const [config] = parseMemoryOptions({ stores: { agent: { scope: ANN, ...options } } })
  const result = await resolveMemoryStore(config!, { agent: 'support', run: { runId: 'r', threadId: 't' }, user: { id: 'ann' }, metadata: {}, workspace: createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }), writable: true })
  return result!.adapter
}

async function active(adapter: MemoryStoreAdapter, scope = target): Promise<string[]> {
  return (await adapter.export(scope)).filter(record => record.status === 'active').map(record => record.content)
}

/** A scope with every status: active, superseded, deleted, superseded then deleted, an episode, keywords. */
async function richScope(adapter: MemoryStoreAdapter): Promise<void> {
  const audit = { via: 'tool', agent: 'support', runId: 'run_9', threadId: 'th_9', user: 'ann', approver: 'ann', approvalReason: 'ok' }
  const first = await adapter.append(target, note('Lives in Oslo', { createdAt: '2023-05-01T10:00:00Z', tags: ['home'], provenance: { source: 'tool', runId: 'run_9' }, confidence: 0.9, title: 'Home' }), { audit })
  const second = await adapter.append(target, note('Lives in Bergen', { supersedes: [first.id], keywords: ['bergen'], topics: ['home'] }), { audit })
  await adapter.append(target, { kind: 'episodic', content: 'Reset a password', episode: { observation: 'locked out', result: 'reset worked' }, pinned: true, metadata: { ticket: 7 } }, { audit: { via: 'api' } })
  const deleted = await adapter.append(target, note('Old phone number'), { audit })
  await adapter.delete(target, deleted.id, { audit: { via: 'tool' }, reason: 'outdated' })
  await adapter.append(target, note('Lives in Tromsø', { supersedes: [second.id] }), { audit })
  await adapter.delete(target, second.id, { audit: { via: 'api' } })
}

/** The records as an import writes them: the importer's audit, the file's audit kept as provenance. */
const asImported = (records: MemoryRecord[], audit: MemoryAudit, file: { exportedAt: string; agent?: string }) => records.map(record => ({ ...record, audit, provenance: { ...record.provenance, imported: { audit: record.audit, exportedAt: file.exportedAt, ...(file.agent ? { agent: file.agent } : {}) } } }))

async function verifyLines(text: string) {
  const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
  await workspace.append('memory:memory.jsonl', text)
  return verifyLog(workspace, 'memory:memory.jsonl')
}

function sqlRetentionSuite(name: string, open: () => Promise<SqlStoreUnderTest>): void {
  describe(`${name} retention, erasure and import`, () => {
    it('maxAge erases every record of the scope created before the cutoff, pinned too; no row keeps their text and the chain verifies', async () => {
      const { factory, adapter, dump } = await open()
      const old = await adapter.append(target, note('zebracorn grazing notes', { createdAt: '2020-01-01T00:00:00Z' }), api)
      const pinned = await adapter.append(target, note('quagmirella pinned fact', { createdAt: '2020-02-01T00:00:00Z', pinned: true }), api)
      await adapter.append(target, note('fresh note of today'), api)
      await adapter.append(other, note('bob keeps an ancient note', { createdAt: '2020-01-01T00:00:00Z' }), api)
      expect(await dump()).toContain('zebracorn')
      const result = await applyMemoryRetention(adapter, target, { maxAgeMs: 365 * 86_400_000, hardDelete: false }, { audit: { via: 'cli' } })
      expect({ deleted: result.deleted, erased: [...result.erased].sort() }).toEqual({ deleted: [], erased: [old.id, pinned.id].sort() })
      expect(await active(adapter)).toEqual(['fresh note of today'])
      expect(await active(adapter, other)).toEqual(['bob keeps an ancient note'])
      const text = await dump()
      expect(text.includes('zebracorn')).toBe(false)
      expect(text.includes('quagmirella')).toBe(false)
      expect(await factory.verify()).toMatchObject({ ok: true, lines: 6 })
    })

    it('a store with retention maxAge and hardDelete resolves (no MEMORY_RETENTION_UNSUPPORTED): a delete erases, maxItems erases the oldest', async () => {
      const { factory, dump } = await open()
      const adapter = await resolved({ adapter: factory, retention: { maxAge: '30d', hardDelete: true, maxItems: 2 } })
      const gone = await adapter.append(target, note('xylophonist secret one'), api)
      expect(await adapter.delete(target, gone.id, { audit: { via: 'api' }, reason: 'asked' })).toMatchObject({ id: gone.id, status: 'deleted' })
      await adapter.append(target, note('kettlewhistle oldest', { createdAt: '2030-01-01T00:00:00Z' }), api)
      await adapter.append(target, note('second newest', { createdAt: '2030-01-02T00:00:00Z' }), api)
      await adapter.append(target, note('newest', { createdAt: '2030-01-03T00:00:00Z' }), api)
      expect(await active(adapter)).toEqual(['second newest', 'newest'])
      const text = await dump()
      expect(text.includes('xylophonist')).toBe(false)
      expect(text.includes('kettlewhistle')).toBe(false)
      expect((await verifyLines(await factory.exportLog())).ok).toBe(true)
    })

    it('eraseMemoryScope erases every record of the scope in any status from every row of every table, is idempotent and keeps other scopes', async () => {
      const { factory, adapter, dump } = await open()
      await richScope(adapter)
      await adapter.append(other, note('Bob lives in Stavanger'), api)
      const before = await adapter.export(target)
      expect(before).toHaveLength(5)
      const report = await eraseMemoryScope(adapter, target, { audit: { via: 'cli' } })
      expect({ erased: report.erased, ids: [...report.ids].sort() }).toEqual({ erased: 5, ids: before.map(record => record.id).sort() })
      expect(await adapter.export(target)).toEqual([])
      expect(await adapter.search(target, { query: 'Lives' })).toEqual([])
      expect(await adapter.read(target, before[0]!.id)).toBeUndefined()
      // Lower case: the full-text index keeps terms (SQLite's FTS5 segments, Postgres's tsvector) as lower-case tokens.
      const text = (await dump()).toLowerCase()
      for (const erased of ['oslo', 'bergen', 'tromsø', 'phone', 'password', 'locked', 'worked', 'outdated']) expect(text.includes(erased), erased).toBe(false)
      expect(text).toContain('stavanger')
      expect((await eraseMemoryScope(adapter, target, { audit: { via: 'cli' } })).erased).toBe(0)
      expect(await active(adapter, other)).toEqual(['Bob lives in Stavanger'])
      const lines = await factory.exportLog()
      expect((await verifyLines(lines)).ok).toBe(true)
      expect(lines.split('\n').filter(line => line.includes('"erase"')).length).toBe(5)
    })

    it('export from the JSONL store, import here, export here, import into JSONL again reproduces the scope; the exported lines verify and a re-import adds nothing', async () => {
      const jsonl = () => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', writable: true, workspace: createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }) })
      const source = await jsonl()
      await richScope(source)
      const file = JSON.parse(JSON.stringify(await exportMemoryScope(source, target, { agent: 'support' })))
      const { factory, adapter } = await open()
      const importer = { via: 'import', user: 'ann' }
      expect(await importMemoryScope(adapter, target, file, { audit: importer })).toEqual({ added: 5, skipped: 0, duplicates: 0, renamed: 0, expired: 0 })
      const imported = await adapter.export(target)
      expect(imported).toEqual(asImported(await source.export(target), importer, file))
      expect(await importMemoryScope(adapter, target, file, { audit: importer })).toEqual({ added: 0, skipped: 5, duplicates: 0, renamed: 0, expired: 0 })
      expect(await verifyLines(await factory.exportLog())).toMatchObject({ ok: true, lines: 9 })
      expect((await adapter.search(target, { query: 'reset worked' })).map(hit => hit.record.kind)).toEqual(['episodic'])
      const back = JSON.parse(JSON.stringify(await exportMemoryScope(adapter, target)))
      const destination = await jsonl()
      expect((await importMemoryScope(destination, target, back, { audit: { via: 'import' } })).added).toBe(5)
      expect(await destination.export(target)).toEqual(asImported(imported, { via: 'import' }, back))
    })

    it('importing into another scope renames ids that clash with the first scope and skips active duplicates of the target', async () => {
      const { adapter } = await open()
      await richScope(adapter)
      const file = JSON.parse(JSON.stringify(await exportMemoryScope(adapter, target)))
      await adapter.append(other, note('Lives in Tromsø'), api)
      const result = await importMemoryScope(adapter, other, file, { audit: { via: 'import' } })
      expect(result).toEqual({ added: 4, skipped: 0, duplicates: 1, renamed: 4, expired: 0 })
      const ids = new Set((await adapter.export(target)).map(record => record.id))
      const copied = await adapter.export(other)
      expect(copied).toHaveLength(5)
      expect(copied.filter(record => ids.has(record.id))).toEqual([])
      expect((await active(adapter, other)).sort()).toEqual(['Lives in Tromsø', 'Reset a password'])
    })

    it('hardDeleteMemoryRecord of a record written after an approval: the approval reasons and the erase reason that quote it are in no row, and the chain verifies', async () => {
      const { factory, adapter, dump } = await open()
      const written = await adapter.append(target, note('zebracorn vault code 4471'), { audit: { via: 'tool', user: 'ann', approver: 'ann', approvalReason: 'keep the zebracorn vault code' } })
      expect((await adapter.read(target, written.id))?.audit).toEqual({ via: 'tool', user: 'ann', approver: 'ann', approvalReason: 'keep the zebracorn vault code' })
      await adapter.append(target, note('fresh note of today'), api)
      expect(await dump()).toContain('keep the zebracorn')
      const report = await hardDeleteMemoryRecord(adapter, target, written.id, { audit: { via: 'tool', user: 'ann', approver: 'ann', approvalReason: 'erase the quagmirella code' }, reason: 'asked to forget the yeti-phrase code' })
      expect(report).toMatchObject({ erased: 1, ids: [written.id] })
      const text = await dump()
      for (const words of ['zebracorn', 'quagmirella', 'yeti-phrase']) expect(text.includes(words)).toBe(false)
      expect(await active(adapter)).toEqual(['fresh note of today'])
      expect(await factory.verify()).toMatchObject({ ok: true, lines: 3 })
    })

    it('hardDelete of a record whose imported lines hold the approval reason in their header (an earlier writer) fails with MEMORY_SQL_HEADER_TEXT_ERASE and changes nothing', async () => {
      const { factory, adapter } = await open()
      const earlier = { ...memoryFold.schema, lineDraft: undefined }
      const hash = (await sha256HexSync())!
      const draft = { type: 'remember' as const, recordId: 'mem_0123456789abcdef0123456789abcdef', store: 'agent', scope: ANN, version: 1, at: '2026-01-01T00:00:00.000Z', kind: 'semantic', content: 'zebracorn vault code', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: '2026-01-01T00:00:00.000Z', audit: { via: 'tool', approvalReason: 'keep the zebracorn code' } }
      const { line } = serializeEvent(earlier, draft, 1, null, false, hash) as { line: string }
      expect(await factory.importLog(`${line}\n`)).toBe(1)
      await expect(hardDeleteMemoryRecord(adapter, target, draft.recordId, { audit: { via: 'api' } })).rejects.toMatchObject({ code: 'MEMORY_SQL_HEADER_TEXT_ERASE' })
      expect((await adapter.read(target, draft.recordId))?.content).toBe('zebracorn vault code')
      expect(await factory.verify()).toMatchObject({ ok: true, lines: 1 })
    })
  })
}

/** Whether this role may read the server's files (`pg_read_binary_file`: superusers and pg_read_server_files). */
const readsServerFiles = postgres.reachable && await postgres.admin.query('SELECT pg_read_binary_file(pg_relation_filepath(\'pg_class\')) IS NOT NULL AS ok').then(() => true, () => false)

/** The relations of `url`'s schema (tables, indexes, their TOAST tables) whose files hold one of `words`, after a CHECKPOINT. */
async function relationsHolding(url: string, words: RegExp): Promise<string[]> {
  const schema = new URL(url).searchParams.get('options')!.split('=')[1]!
  await postgres.admin.query('CHECKPOINT')
  const { rows } = await postgres.admin.query(`SELECT c.relname, pg_read_binary_file(pg_relation_filepath(c.oid)) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname IN ($1, 'pg_toast') AND c.relkind IN ('r', 'i', 't') AND pg_relation_filepath(c.oid) IS NOT NULL AND (n.nspname = $1 OR c.oid IN (SELECT reltoastrelid FROM pg_class k JOIN pg_namespace m ON m.oid = k.relnamespace WHERE m.nspname = $1))`, [schema])
  return rows.filter(row => words.test(Buffer.from(row.bytes).toString('latin1').toLowerCase())).map(row => row.relname as string).sort()
}

/** A second session of the test database inside a transaction that has taken its snapshot (a vacuum cannot remove what it may see). */
async function openOlderTransaction(): Promise<{ end(): Promise<void> }> {
  const client = await postgres.admin.connect()
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ')
  await client.query('SELECT 1 FROM pg_class LIMIT 1')
  return { async end() { await client.query('COMMIT'); client.release() } }
}

const SECRET = /zebracornsecret|quagmirellatitle/

describe('postgresMemoryStore erasure on disk', () => {
  async function storeWithSecret(options: { erasureWaitMs?: number } = {}) {
    const url = await postgres.fresh()
    const factory = postgresMemoryStore({ connectionString: url, ...options })
    postgres.onClose(() => factory.close())
    const adapter = factory.create()
    await adapter.append(target, note('zebracornsecret lives in the heap', { title: 'quagmirellatitle' }), api)
    await adapter.append(other, note('bob keeps his note'), api)
    expect((await relationsHolding(url, SECRET)).length).toBeGreaterThan(0)
    return { url, factory, adapter }
  }

  it.skipIf(!readsServerFiles)('after eraseMemoryScope no file of any table or index of the store holds the erased text (the store vacuums them)', async () => {
    const { url, factory, adapter } = await storeWithSecret()
    expect((await eraseMemoryScope(adapter, target, { audit: { via: 'cli' } })).erased).toBe(1)
    expect(await relationsHolding(url, SECRET)).toEqual([])
    expect(await factory.verify()).toMatchObject({ ok: true, lines: 3 })
  })

  it.skipIf(!readsServerFiles)('an erasure waits for a transaction older than it to end, then no file holds the erased text', async () => {
    const { url, adapter } = await storeWithSecret()
    const older = await openOlderTransaction()
    let erased = false
    const erasing = eraseMemoryScope(adapter, target, { audit: { via: 'cli' } }).then((result) => { erased = true; return result })
    await new Promise(resolve => setTimeout(resolve, 400))
    // The vacuum found old row versions it may not remove yet: the erasure is still waiting.
    expect(erased).toBe(false)
    await older.end()
    expect((await erasing).erased).toBe(1)
    expect(await relationsHolding(url, SECRET)).toEqual([])
  })

  it.skipIf(!readsServerFiles)('an erasure still held back by an older transaction after erasureWaitMs fails with MEMORY_POSTGRES_ERASURE_PENDING; the rows hold no erased text', async () => {
    const { url, adapter } = await storeWithSecret({ erasureWaitMs: 200 })
    const older = await openOlderTransaction()
    try {
      await expect(eraseMemoryScope(adapter, target, { audit: { via: 'cli' } })).rejects.toMatchObject({ code: 'MEMORY_POSTGRES_ERASURE_PENDING', details: { waitedMs: 200 } })
    }
    finally {
      await older.end()
    }
    expect(await adapter.export(target)).toEqual([])
    expect(await postgres.dump(url)).not.toMatch(SECRET)
  })

  it('the vacuum report is read per table: dead versions not yet removable are summed, no report is unknown', () => {
    expect(versionsNotRemovable(['tuples: 1 removed, 3 remain, 2 are dead but not yet removable\nremovable cutoff: 9', 'tuples: 0 removed, 0 remain, 1 are dead but not yet removable'])).toBe(3)
    expect(versionsNotRemovable(['tuples: 4 removed, 3 remain, 0 are dead but not yet removable'])).toBe(0)
    expect(versionsNotRemovable([])).toBeUndefined()
  })
})

describe('postgresMemoryStore retention across app instances', () => {
  it.skipIf(!postgres.reachable)('appends on one instance while another runs maxItems with hardDelete: no write lost or doubled, the chain verifies, maxItems active records left', async () => {
    const url = await postgres.fresh()
    const writer = postgresMemoryStore({ connectionString: url })
    const sweeper = postgresMemoryStore({ connectionString: url })
    postgres.onClose(() => writer.close())
    postgres.onClose(() => sweeper.close())
    const appending = (async () => {
      for (let i = 0; i < 60; i++) await writer.create().append(target, note(`note number ${i}`, { createdAt: new Date(Date.UTC(2030, 0, 1, 0, i)).toISOString() }), api)
    })()
    let erased = 0
    let done = false
    appending.finally(() => { done = true }).catch(() => {})
    while (!done) erased += (await applyMemoryRetention(sweeper.create(), target, { maxItems: 5, hardDelete: true }, { audit: { via: 'retention' } })).erased.length
    await appending
    erased += (await applyMemoryRetention(sweeper.create(), target, { maxItems: 5, hardDelete: true }, { audit: { via: 'retention' } })).erased.length
    expect(erased).toBe(55)
    expect(await active(writer.create())).toEqual([55, 56, 57, 58, 59].map(i => `note number ${i}`))
    const lines = (await writer.exportLog()).trim().split('\n').map(line => JSON.parse(line) as { seq: number; type: string })
    expect(lines.map(line => line.seq)).toEqual(lines.map((_, i) => i + 1))
    expect(lines.filter(line => line.type === 'remember').length).toBe(60)
    expect(lines.filter(line => line.type === 'erase').length).toBe(55)
    expect(await writer.verify()).toMatchObject({ ok: true, lines: 115 })
  })
})

sqlRetentionSuite('sqliteMemoryStore', openSqlite)
if (postgres.reachable) sqlRetentionSuite('postgresMemoryStore', openPostgres)
else describe('postgresMemoryStore retention, erasure and import', () => it.skip(`skipped: ${POSTGRES_SKIP_HINT}`, () => {}))

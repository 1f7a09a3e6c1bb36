import pg from 'pg'
import { describe, expect, it } from 'vitest'
import { postgresMemoryStore, workspaceJsonlMemoryStore } from '../../../src/capabilities/index.ts'
import type { PostgresPoolLike } from '../../../src/memory/stores/postgres.ts'
import type { MemoryAudit, MemoryTarget } from '../../../src/memory/types.ts'
import { testMemoryStore } from '../../../src/testing/index.ts'
import { createWorkspace } from '../../../src/workspace/workspace.ts'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { killDbChildMidWrite, runDbChild } from '../../helpers/db-child.ts'
import { fillCommonTermsScope } from '../../helpers/common-terms.ts'
import { synonymRanking } from '../../helpers/synonym-scope.ts'
import { POSTGRES_SKIP_HINT, postgresTestDatabases, schemaOf } from '../../helpers/postgres.ts'

const audit: MemoryAudit = { via: 'api', agent: 'support', runId: 'run_1', threadId: 'thread_1' }
const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }

const databases = await postgresTestDatabases('vam')
const { admin, reachable } = databases
/** A connection string whose tables live in a new, empty schema (a fresh store per test). */
const freshDatabase = () => databases.fresh()

function store(connectionString: string) {
  const factory = postgresMemoryStore({ connectionString })
  databases.onClose(() => factory.close())
  return factory
}

/** A real pool (ended after the file's tests) whose clients run `before` ahead of every message they send. */
function interceptedPool(connectionString: string, before: (text: string, client: pg.PoolClient) => Promise<void>): PostgresPoolLike {
  const real = new pg.Pool({ connectionString })
  real.on('error', () => {})
  databases.onClose(() => real.end())
  return {
    query: (text, values) => real.query(text, values),
    end: () => real.end(),
    async connect() {
      const client = await real.connect()
      return {
        release: error => client.release(error as Error | undefined),
        on: (event, listener) => client.on(event, listener),
        async query(text, values) {
          await before(text, client)
          return client.query(text, values)
        },
      }
    },
  }
}

async function rows(connectionString: string): Promise<Array<{ seq: string; line: string }>> {
  return (await admin.query(`SELECT seq, line FROM ${schemaOf(connectionString)}.memory_events ORDER BY seq`)).rows
}

if (!reachable) {
  describe('postgresMemoryStore', () => {
    it.skip(`skipped: ${POSTGRES_SKIP_HINT}`, () => {})
  })
}
else {
  testMemoryStore('postgresMemoryStore', async () => store(await freshDatabase()).create(), { describe, it, expect })

  describe('postgresMemoryStore options', () => {
    it('needs exactly one of connectionString and pool, and refuses unknown keys', () => {
      expect(() => postgresMemoryStore({} as never)).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_OPTIONS_INVALID' }))
      expect(() => postgresMemoryStore({ connectionString: 'postgres://x', pool: admin } as never)).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_OPTIONS_INVALID' }))
      expect(() => postgresMemoryStore({ connectionString: 'postgres://x', poool: 1 } as never)).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_OPTIONS_INVALID' }))
      expect(() => postgresMemoryStore({ connectionString: ' ' })).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_OPTIONS_INVALID' }))
    })

    it('{ connectionString: process.env.DATABASE_URL } with the variable unset says the URL is undefined and to set the variable, not "exactly one of"', () => {
      expect(() => postgresMemoryStore({ connectionString: process.env.VAM_UNSET_DATABASE_URL_FOR_TEST! })).toThrow(expect.objectContaining({
        code: 'MEMORY_STORE_OPTIONS_INVALID',
        message: expect.stringContaining('`connectionString` is undefined, as `process.env.DATABASE_URL` is when the variable is not set. Fix: set the environment variable'),
      }))
    })

    it('a pg Pool passed as the options themselves is refused with postgresMemoryStore({ pool }) as the fix, not a list of its private fields', () => {
      expect(() => postgresMemoryStore(admin as never)).toThrow(expect.objectContaining({
        code: 'MEMORY_STORE_OPTIONS_INVALID',
        message: 'MEMORY_STORE_OPTIONS_INVALID: postgresMemoryStore() got a pg Pool as its options object. Fix: pass it as the `pool` option: postgresMemoryStore({ pool })',
      }))
    })

    it('a server that does not answer is MEMORY_POSTGRES_UNAVAILABLE with a fix', async () => {
      const factory = store('postgres://postgres@127.0.0.1:1/none')
      await expect(factory.create().read(alice, 'mem_1')).rejects.toMatchObject({ code: 'MEMORY_POSTGRES_UNAVAILABLE', fix: expect.stringMatching(/retry/) })
    })

    it('synchronousCommit: false still commits every write (the chain verifies); a non-boolean is refused', async () => {
      expect(() => postgresMemoryStore({ connectionString: 'postgres://x', synchronousCommit: 'no' } as never)).toThrow(expect.objectContaining({ code: 'MEMORY_STORE_OPTIONS_INVALID' }))
      const url = await freshDatabase()
      const factory = postgresMemoryStore({ connectionString: url, synchronousCommit: false })
      databases.onClose(() => factory.close())
      const adapter = factory.create()
      for (let n = 0; n < 3; n++) await adapter.append(alice, { kind: 'semantic', content: `fast ${n}` }, { audit })
      expect((await rows(url)).length).toBe(3)
      expect(await factory.verify()).toEqual({ ok: true, lines: 3 })
    })

    it('a pool the app owns is used and left open by close()', async () => {
      const url = await freshDatabase()
      const pool = new pg.Pool({ connectionString: url })
      const factory = postgresMemoryStore({ pool })
      const saved = await factory.create().append(alice, { kind: 'semantic', content: 'from a pool' }, { audit })
      await factory.close()
      expect((await pool.query('SELECT count(*)::int AS n FROM memory_records')).rows[0].n).toBe(1)
      expect((await factory.create().read(alice, saved.id))?.content).toBe('from a pool')
      await pool.end()
    })
  })

  describe('postgresMemoryStore tables and chain', () => {
    it('each event is a row holding its JSONL line; exportLog verifies and the JSONL store reads the same records', async () => {
      const url = await freshDatabase()
      const factory = store(url)
      const adapter = factory.create()
      const a = await adapter.append(alice, { kind: 'profile', content: 'ünïcödé ✓ 🎉 it\'s "quoted"', tags: ['t'] }, { audit })
      await adapter.append(alice, { kind: 'semantic', content: 'newer', supersedes: [a.id] }, { audit })
      expect((await rows(url)).map(row => JSON.parse(row.line).type)).toEqual(['remember', 'remember', 'supersede'])
      const text = await factory.exportLog()
      expect(await factory.verify()).toEqual({ ok: true, lines: 3 })
      const workspace = createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
      await workspace.append('memory:memory.jsonl', text)
      const jsonl = await workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', writable: true, workspace })
      expect(await jsonl.export(alice)).toEqual(await adapter.export(alice))
      const copy = store(await freshDatabase())
      expect(await copy.importLog(text)).toBe(3)
      expect(await copy.exportLog()).toBe(text)
      expect(await copy.create().export(alice)).toEqual(await adapter.export(alice))
    })

    it('hardDelete removes the record\'s content from every row and its vector, and the chain still verifies', async () => {
      const url = await freshDatabase()
      const factory = store(url)
      const adapter = factory.create()
      const secret = await adapter.append(alice, { kind: 'semantic', content: 'card 4111-SECRET-7777' }, { audit })
      await adapter.setEmbedding(alice, secret.id, [1, 0, 0])
      await adapter.append(alice, { kind: 'semantic', content: 'kept' }, { audit })
      expect(await adapter.hardDelete(alice, secret.id, { audit })).toBe(true)
      expect(await adapter.read(alice, secret.id)).toBeUndefined()
      expect(await adapter.search(alice, { query: 'SECRET' })).toEqual([])
      const schema = schemaOf(url)
      const dump = JSON.stringify((await admin.query(`SELECT * FROM ${schema}.memory_events`)).rows) + JSON.stringify((await admin.query(`SELECT * FROM ${schema}.memory_records`)).rows)
      expect(dump.includes('4111-SECRET')).toBe(false)
      expect(dump.toLowerCase().includes('secret')).toBe(false)
      expect(await factory.verify()).toEqual({ ok: true, lines: 3 })
      await expect(adapter.append(alice, { kind: 'semantic', content: 'x', supersedes: [secret.id] }, { audit })).rejects.toMatchObject({ code: 'MEMORY_SUPERSEDE_NOT_FOUND' })
    })

    it('vectors kept in the column are scored exactly (cosine), only within the scope', async () => {
      const adapter = store(await freshDatabase()).create()
      const near = await adapter.append(alice, { kind: 'semantic', content: 'near' }, { audit })
      const far = await adapter.append(alice, { kind: 'semantic', content: 'far' }, { audit })
      const bobs = await adapter.append({ store: 'agent', scope: { agent: 'support', user: 'bob' } }, { kind: 'semantic', content: 'bob' }, { audit })
      expect(await adapter.setEmbedding(alice, near.id, [1, 1, 0])).toBe(true)
      expect(await adapter.setEmbedding(alice, far.id, [0, 0, 1])).toBe(true)
      expect(await adapter.setEmbedding(alice, bobs.id, [1, 1, 0])).toBe(false)
      const hits = await adapter.nearest(alice, [1, 0, 0])
      expect(hits.map(hit => [hit.record.id, Math.round(hit.score * 1e6) / 1e6])).toEqual([[near.id, Math.round(Math.SQRT1_2 * 1e6) / 1e6], [far.id, 0]])
      await expect(adapter.nearest(alice, [Number.NaN])).rejects.toMatchObject({ code: 'MEMORY_VECTOR_INVALID' })
    })
  })

  describe('postgresMemoryStore write messages', () => {
    /** A real pool whose clients record every message sent to the server. */
    function countingPool(connectionString: string, sent: string[]): PostgresPoolLike {
      return interceptedPool(connectionString, async (text) => { sent.push(text) })
    }

    it('a lone append after the first sends one message to the server (BEGIN, lock, head check, lines, COMMIT)', async () => {
      const sent: string[] = []
      const factory = postgresMemoryStore({ pool: countingPool(await freshDatabase(), sent) })
      const adapter = factory.create()
      await adapter.append(alice, { kind: 'semantic', content: 'first' }, { audit })
      sent.length = 0
      await adapter.append(alice, { kind: 'semantic', content: 'second' }, { audit })
      expect(sent).toHaveLength(1)
      expect(sent[0]).toMatch(/^BEGIN;\nSELECT pg_advisory_xact_lock\(\d+, hashtext\(coalesce\(current_schema\(\), ''\)\)\);\nSELECT memory_expect_head\(1, '[0-9a-f]{64}'\);\nINSERT INTO memory_events[\s\S]*COMMIT$/)
      expect((await adapter.export(alice)).map(record => record.content)).toEqual(['first', 'second'])
    })

    it('two app instances taking turns build on a head the other moved: each write is checked, retried, and none is lost or duplicated', async () => {
      const connectionString = await freshDatabase()
      const one = store(connectionString).create()
      const two = store(connectionString).create()
      for (let n = 0; n < 20; n++) await (n % 2 === 0 ? one : two).append(alice, { kind: 'semantic', content: `turn ${n}` }, { audit })
      expect((await one.export(alice)).map(record => record.content)).toEqual(Array.from({ length: 20 }, (_, n) => `turn ${n}`))
      expect((await rows(connectionString)).map(row => Number(row.seq))).toEqual(Array.from({ length: 20 }, (_, n) => n + 1))
      expect(await store(connectionString).verify()).toEqual({ ok: true, lines: 20 })
    })
  })

  describe('postgresMemoryStore faults', () => {
    it('two app instances (two OS processes) remembering 100 records each give 200 records, a gap-free seq and a chain that verifies', async () => {
      const url = await freshDatabase()
      await store(url).create().search(alice, { query: 'warm up' }) // creates the tables
      expect(await Promise.all([runDbChild('postgres', url, 100, 'left'), runDbChild('postgres', url, 100, 'right')])).toEqual(['done 100\n', 'done 100\n'])
      expect((await rows(url)).map(row => Number(row.seq))).toEqual(Array.from({ length: 200 }, (_, index) => index + 1))
      const factory = store(url)
      expect(await factory.verify()).toEqual({ ok: true, lines: 200 })
      const contents = new Set((await factory.create().export(alice)).map(record => record.content))
      expect(contents.size).toBe(200)
      for (const tag of ['left', 'right']) for (let n = 0; n < 100; n++) expect(contents.has(`${tag} fact ${n}`)).toBe(true)
    }, 120_000)

    it('an instance killed with SIGKILL in the middle of a write keeps every acknowledged write, and the chain verifies', async () => {
      const url = await freshDatabase()
      await store(url).create().search(alice, { query: 'warm up' })
      const acknowledged = await killDbChildMidWrite('postgres', url, 30, 'killed')
      const factory = store(url)
      const contents = new Set((await factory.create().export(alice)).map(record => record.content))
      for (const content of acknowledged) expect(contents.has(content)).toBe(true)
      expect(contents.size - acknowledged.length).toBeLessThanOrEqual(1)
      expect(await factory.verify()).toMatchObject({ ok: true, lines: contents.size })
    }, 60_000)

    it('a transaction that fails after inserting its line is rolled back: nothing of it is visible', async () => {
      const url = await freshDatabase()
      const factory = store(url)
      const adapter = factory.create()
      const kept = await adapter.append(alice, { kind: 'semantic', content: 'before the fault' }, { audit })
      const schema = schemaOf(url)
      // A real fault inside the write: the records insert raises after the event row went in.
      await admin.query(`CREATE FUNCTION ${schema}.boom() RETURNS trigger AS $$ BEGIN IF NEW.haystack LIKE '%boom%' THEN RAISE EXCEPTION 'injected fault'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`)
      await admin.query(`CREATE TRIGGER boom BEFORE INSERT ON ${schema}.memory_records FOR EACH ROW EXECUTE FUNCTION ${schema}.boom()`)
      await expect(adapter.append(alice, { kind: 'semantic', content: 'boom now' }, { audit })).rejects.toMatchObject({ code: 'MEMORY_POSTGRES_FAILED' })
      expect((await rows(url)).length).toBe(1)
      expect((await adapter.export(alice)).map(record => record.id)).toEqual([kept.id])
      expect(await adapter.search(alice, { query: 'boom' })).toEqual([])
      const after = await adapter.append(alice, { kind: 'semantic', content: 'after the fault' }, { audit })
      expect((await rows(url)).map(row => JSON.parse(row.line).recordId)).toEqual([kept.id, after.id])
      expect(await factory.verify()).toEqual({ ok: true, lines: 2 })
    })

    it('a connection killed by pg_terminate_backend in the middle of a write is MEMORY_POSTGRES_UNAVAILABLE, loses nothing, and the next write works', async () => {
      const url = await freshDatabase()
      let killNext = false
      // The real pool, with the backend of the writing connection terminated just before the message that inserts its line.
      const pool = interceptedPool(url, async (text, client) => {
        if (killNext && text.includes('INSERT INTO memory_events')) {
          killNext = false
          const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid
          await admin.query('SELECT pg_terminate_backend($1)', [pid])
        }
      })
      const factory = postgresMemoryStore({ pool })
      const adapter = factory.create()
      const first = await adapter.append(alice, { kind: 'semantic', content: 'acknowledged' }, { audit })
      killNext = true
      await expect(adapter.append(alice, { kind: 'semantic', content: 'lost in flight' }, { audit })).rejects.toMatchObject({ code: 'MEMORY_POSTGRES_UNAVAILABLE', fix: expect.stringMatching(/retry/) })
      expect((await adapter.export(alice)).map(record => record.content)).toEqual(['acknowledged'])
      const second = await adapter.append(alice, { kind: 'semantic', content: 'retried' }, { audit })
      expect((await adapter.export(alice)).map(record => record.id)).toEqual([first.id, second.id])
      expect(await factory.verify()).toEqual({ ok: true, lines: 2 })
    })
  })

  describe('postgresMemoryStore stores in two schemas of one database', () => {
    it('a write of a store in another schema is not held up by a write transaction still open in this one (the write lock is per schema)', async () => {
      const [holding, other] = [await freshDatabase(), await freshDatabase()]
      let hold: (() => void) | undefined
      let armed = false
      const held = new Promise<void>((resolve) => {
        // The real pool of the first store, paused inside a write transaction: after the message that took the write lock, before the one that inserts its line and commits.
        const pool = interceptedPool(holding, async (text) => {
          if (armed && text.includes('INSERT INTO memory_events') && !text.includes('pg_advisory_xact_lock')) {
            armed = false
            resolve()
            await new Promise<void>(release => (hold = release))
          }
        })
        const factory = postgresMemoryStore({ pool })
        databases.onClose(() => factory.close())
        const adapter = factory.create()
        // A first write: the lock and the chain head in one message, the line and COMMIT in the next.
        armed = true
        void adapter.append(alice, { kind: 'semantic', content: 'held open' }, { audit })
      })
      await held
      let pid: number | undefined
      const otherPool = interceptedPool(other, async (_text, client) => {
        pid ??= (client as unknown as { processID: number }).processID
      })
      const otherFactory = postgresMemoryStore({ pool: otherPool })
      databases.onClose(() => otherFactory.close())
      const writing = otherFactory.create().append(alice, { kind: 'semantic', content: 'another schema' }, { audit }).then(() => 'written' as const)
      // Either the other store's write commits, or its backend is seen waiting for an advisory lock.
      const blocked = (async () => {
        while (true) {
          await new Promise(resolve => setTimeout(resolve, 20))
          if (pid === undefined) continue
          const { rows: waiting } = await admin.query(`SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock' AND wait_event = 'advisory'`, [pid])
          if (waiting.length > 0) return 'waiting for the other schema\'s write lock' as const
        }
      })()
      const outcome = await Promise.race([writing, blocked])
      hold!()
      await writing
      expect(outcome).toBe('written')
    })
  })

  describe('postgresMemoryStore top-k cut of the ranking', () => {
    it('in a scope larger than the cut, the records holding every query word rank first though each word is common', async () => {
      const adapter = store(await freshDatabase()).create()
      const { allThree } = await fillCommonTermsScope(adapter, alice, audit)
      const hits = await adapter.search(alice, { query: 'weekend garden sunset', limit: 10 })
      expect(new Set(hits.slice(0, 3).map(hit => hit.record.id))).toEqual(new Set(allThree))
    })

    it('when the filters leave too few of the candidates, every match is ranked: the oldest records of the one kind asked for are found', async () => {
      const adapter = store(await freshDatabase()).create()
      const { procedural } = await fillCommonTermsScope(adapter, alice, audit)
      const hits = await adapter.search(alice, { query: 'weekends', kinds: ['procedural'], limit: 10 })
      expect(hits.map(hit => hit.record.id).sort()).toEqual([...procedural].sort())
    })
  })

  describe('postgresMemoryStore search', () => {
    it('rows made before the dates weight class are made again at open: date words leave the substring text, the scope statistics follow', async () => {
      const url = await freshDatabase()
      const adapter = store(url).create()
      const trip = await adapter.append(alice, { kind: 'episodic', content: 'Caroline went to a support group', occurredAt: '2023-06-03' }, { audit })
      await adapter.append(alice, { kind: 'semantic', content: 'hello world', createdAt: '2023-05-08T10:00:00.000Z' }, { audit: { via: 'import' } })
      const schema = schemaOf(url)
      // What an older version wrote: the date words in the substring text and the content length, no terms version.
      await admin.query(`UPDATE ${schema}.memory_records SET terms_version = NULL, haystack = haystack || ' saturday 3 june 2023', content_len = content_len + 4 WHERE id = $1`, [trip.id])
      await admin.query(`UPDATE ${schema}.memory_partitions SET content_sum = content_sum + 4`)
      const reopened = store(url).create()
      expect(await reopened.search(alice, { query: 'june', mode: 'substring' })).toEqual([])
      expect((await reopened.search(alice, { query: 'June 2023 Saturday' })).map(hit => hit.record.content)).toEqual(['Caroline went to a support group', 'hello world'])
      const { rows: versions } = await admin.query(`SELECT DISTINCT terms_version FROM ${schema}.memory_records`)
      expect(versions).toEqual([{ terms_version: 2 }])
      const { rows: sums } = await admin.query(`SELECT p.content_sum::int AS stored, (SELECT sum(content_len)::int FROM ${schema}.memory_records r WHERE r.status = 'active') AS actual FROM ${schema}.memory_partitions p`)
      expect(sums).toEqual([{ stored: 5, actual: 5 }])
    })

    it('a query word finds a record holding only a word of its synonym group, below the word itself, at the synonym weight', async () => {
      const adapter = store(await freshDatabase()).create()
      const { contents, bySynonym, byOwnWord, weight } = await synonymRanking(adapter, alice, audit)
      expect(contents).toEqual(['the kids played football after school', 'my children love the park'])
      expect(bySynonym).toBeCloseTo(weight * byOwnWord, 3)
    })

    it('ranks with BM25F like the default ranking: more occurrences first, title above content, only the scope', async () => {
      const adapter = store(await freshDatabase()).create()
      const once = await adapter.append(alice, { kind: 'semantic', content: 'a note about gardens and other things to do this weekend' }, { audit })
      const titled = await adapter.append(alice, { kind: 'semantic', title: 'Garden', content: 'plans for the weekend and other things to do' }, { audit })
      await adapter.append({ store: 'agent', scope: { agent: 'support', user: 'bob' } }, { kind: 'semantic', content: 'garden garden garden' }, { audit })
      const hits = await adapter.search(alice, { query: 'gardening' })
      expect(hits.map(hit => hit.record.id)).toEqual([titled.id, once.id])
      expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score)
    })
  })
}

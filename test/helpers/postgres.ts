/**
 * Postgres for the tests: the server at DATABASE_URL (CI: `.ci/run` starts one on 5433), one new
 * empty schema per store (its connection string sets `search_path`), every schema dropped after
 * the file's tests; and a dump of every row of every table of a schema as text, for erasure tests.
 */
import pg from 'pg'
import { afterAll } from 'vitest'

export const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5433/postgres'
export const POSTGRES_SKIP_HINT = `no Postgres at ${DATABASE_URL}: run .ci/run, or start a server and set DATABASE_URL (docs/postgres-store.md)`

export interface PostgresTestDatabases {
  reachable: boolean
  admin: pg.Pool
  /** A connection string whose tables live in a new, empty schema. */
  fresh(): Promise<string>
  /** Runs at the end of the file (stores' `close`). */
  onClose(close: () => Promise<void>): void
  /** Every row of every table of the schema of `connectionString`, each as Postgres prints the row (`t::text`: every column, tsvector and jsonb included). */
  dump(connectionString: string): Promise<string>
}

export function schemaOf(connectionString: string): string {
  return new URL(connectionString).searchParams.get('options')!.split('=')[1]!
}

/** Call at the top level of a test file. */
export async function postgresTestDatabases(prefix: string): Promise<PostgresTestDatabases> {
  const admin = new pg.Pool({ connectionString: DATABASE_URL, max: 2 })
  admin.on('error', () => {})
  const reachable = await admin.query('SELECT 1').then(() => true, () => false)
  const schemas: string[] = []
  const closers: Array<() => Promise<void>> = []
  afterAll(async () => {
    for (const close of closers) await close().catch(() => {})
    if (reachable) for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await admin.end()
  })
  let next = 0
  return {
    reachable,
    admin,
    async fresh() {
      const schema = `${prefix}_${process.pid}_${next++}`
      schemas.push(schema)
      await admin.query(`CREATE SCHEMA ${schema}`)
      const url = new URL(DATABASE_URL)
      url.searchParams.set('options', `-c search_path=${schema}`)
      return url.toString()
    },
    onClose(close) {
      closers.push(close)
    },
    async dump(connectionString) {
      const schema = schemaOf(connectionString)
      const { rows: tables } = await admin.query('SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name', [schema])
      requireTables(tables.length)
      let text = ''
      for (const { table_name: table } of tables) {
        const { rows } = await admin.query(`SELECT t::text AS row FROM ${schema}.${table} t`)
        for (const row of rows) text += `${table}: ${row.row}\n`
      }
      return text
    },
  }
}

function requireTables(count: number): void {
  if (count === 0) throw new Error('the schema has no tables: the store was never opened')
}

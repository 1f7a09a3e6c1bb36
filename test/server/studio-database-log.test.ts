/**
 * The studio and inspector routes over a database store (SQLite on a real file, Postgres at
 * DATABASE_URL): its event rows are the log the studio lists scopes from, pages lines of, shows a
 * record's events from and verifies, as for a workspace JSONL store.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { defineAgent } from '../../src/agent/define.ts'
import { memory, postgresMemoryStore, sqliteMemoryStore } from '../../src/capabilities/index.ts'
import { openMemoryStore } from '../../src/memory/open-store.ts'
import type { MemoryStoreFactory } from '../../src/memory/types.ts'
import { createAgentRoutes } from '../../src/server/routes.ts'
import type { AgentSource } from '../../src/server/types.ts'
import { devIdentity } from '../../src/vite/plugin.ts'
import { postgresTestDatabases, POSTGRES_SKIP_HINT } from '../helpers/postgres.ts'

const folders: string[] = []
afterAll(() => folders.forEach(dir => rmSync(dir, { recursive: true, force: true })))
const databases = await postgresTestDatabases('vam_studio_log')

type Factory = MemoryStoreFactory & { close(): Promise<void> }
const families: Array<[string, () => Promise<Factory>]> = [
  ['SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-studio-sqlite-'))
    folders.push(dir)
    return sqliteMemoryStore({ file: join(dir, 'memory.db') })
  }],
]
if (databases.reachable) families.push(['Postgres', async () => postgresMemoryStore({ connectionString: await databases.fresh() })])
else it.skip(`Postgres: ${POSTGRES_SKIP_HINT}`, () => {})

describe.each(families)('studio routes over a %s store', (_family, create) => {
  async function studio() {
    const factory = await create()
    afterAll(() => factory.close())
    const agent = defineAgent({
      name: 'desk',
      driver: { run() {} },
      capabilities: [memory({ stores: { agent: { adapter: factory, scope: ({ user }) => (user ? { agent: 'desk', user: user.id } : undefined), write: { mode: 'tool', policy: 'allow' } } } })],
    })
    const source: AgentSource = { list: async () => ['desk'], load: async name => (name === 'desk' ? agent : undefined) }
    const app = createAgentRoutes({ agents: source, identify: devIdentity(['ann', 'ben']), mode: 'dev', devUsers: ['ann', 'ben'], studio: true })
    const call = async (path: string, method = 'GET') => {
      const response = await app.fetch(new Request(`http://test/__agents${path}`, { method, headers: { 'x-agent-user': 'ann' } }))
      return { status: response.status, json: await response.json() as Record<string, any> }
    }
    const write = async (user: string, content: string, supersedes?: string) => {
      const opened = await openMemoryStore(agent, { user: { id: user } })
      return opened.adapter.append(opened.target, { content, kind: 'semantic', ...(supersedes ? { supersedes: [supersedes] } : {}) }, { audit: { via: 'api' } })
    }
    return { call, write }
  }

  it('lists the scopes of the event table, pages one scope\'s lines, shows a record\'s events and verifies the chain', async () => {
    const { call, write } = await studio()
    const first = await write('ann', 'I prefer aisle seats')
    const second = await write('ann', 'I prefer window seats', first.id)
    await write('ben', 'I like jazz')

    const stores = await call('/agents/desk/stores')
    expect(stores.json.stores).toEqual([expect.objectContaining({ name: 'agent', hasLog: true })])
    const scopes = await call('/agents/desk/stores/agent/scopes')
    expect(scopes.status).toBe(200)
    expect(scopes.json.scopes).toEqual([
      { store: 'agent', scope: { agent: 'desk', user: 'ann' }, lines: 3 },
      { store: 'agent', scope: { agent: 'desk', user: 'ben' }, lines: 1 },
    ])

    const lines = await call('/agents/desk/stores/agent/lines')
    expect(lines.status).toBe(200)
    // A supersede: the new record remembered, then the old one superseded (line numbers of the whole log).
    expect(lines.json.total).toBe(3)
    expect(lines.json.lines.map((line: { line: number; recordId: string; type: string }) => [line.line, line.recordId, line.type])).toEqual([[1, first.id, 'remember'], [2, second.id, 'remember'], [3, first.id, 'supersede']])
    expect(lines.json.lines[1].prev).toBe(lines.json.lines[0].digest)

    const versions = await call(`/agents/desk/stores/agent/records/${second.id}/versions`)
    expect(versions.json.events.map((line: { recordId: string; type: string }) => [line.recordId, line.type])).toEqual([[first.id, 'remember'], [second.id, 'remember'], [first.id, 'supersede']])

    const verified = await call('/agents/desk/stores/agent/verify', 'POST')
    expect(verified.status).toBe(200)
    expect(verified.json).toMatchObject({ key: 'event table', ok: true, lines: 4 })
  })
})

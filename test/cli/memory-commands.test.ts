import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { runAgentCli, type AgentCliResult } from '../helpers/agent-cli.ts'
import { REPO_ROOT } from './locomo.ts'
import { postgresTestDatabases } from '../helpers/postgres.ts'

// Each test launches the CLI as child processes, 1.2-1.6 s of CPU each (tsx loading src/): at a load
// of 15-20 on two cores a launch takes 5-8 s of wall time, so several exceed vitest's 30 s. Every
// launch keeps its own spawn timeout (60 s), which still fails a launch that hangs.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 })

/**
 * `agent memory` commands and `agent mcp` flags as a user types them, run as a real child process
 * (`node --import tsx src/cli/main.ts`) on a project of its own whose agent `notes` scopes its
 * store by tenant and user (`{ agent: 'notes', tenant, user }`), and whose agents `up` and `down`
 * have a store with `embed` (a scripted embedding model; `down`'s fails every call).
 */
let root = ''

function agentCli(args: string[], input = ''): AgentCliResult {
  return runAgentCli([...args, '--root', root], { input })
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'vam-cli-memory-'))
  mkdirSync(join(root, 'server', 'agents'), { recursive: true })
  writeFileSync(join(root, 'server', 'agents', 'notes.ts'), [
    `import { createWorkspace, defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src/index.ts'))}`,
    `import { memory, workspaceJsonlMemoryStore } from ${JSON.stringify(join(REPO_ROOT, 'src/capabilities/index.ts'))}`,
    `export default defineAgent({`,
    `  name: 'notes',`,
    `  driver: { run() {} },`,
    `  workspace: createWorkspace(),`,
    `  capabilities: [memory({ stores: { agent: {`,
    `    adapter: workspaceJsonlMemoryStore(),`,
    `    scope: ({ user }) => (user ? { agent: 'notes', ...(user.tenant ? { tenant: user.tenant } : {}), user: user.id } : undefined),`,
    `    write: { mode: 'tool' },`,
    `  } } })],`,
    `})`,
  ].join('\n'))
  // An agent whose scope always names the user's tenant: without --tenant it is undefined.
  writeFileSync(join(root, 'server', 'agents', 'ten.ts'), [
    `import { createWorkspace, defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src/index.ts'))}`,
    `import { memory, workspaceJsonlMemoryStore } from ${JSON.stringify(join(REPO_ROOT, 'src/capabilities/index.ts'))}`,
    `export default defineAgent({`,
    `  name: 'ten',`,
    `  driver: { run(context) { context.write('tenant=' + context.user?.tenant) } },`,
    `  workspace: createWorkspace({ dir: '.agent/ten' }),`,
    `  capabilities: [memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => ({ agent: 'ten', tenant: user?.tenant, user: user?.id }) } } })],`,
    `})`,
  ].join('\n'))
  // Two agents whose store has `embed`: a scripted embedding model that works, and one that fails as a provider that is down does.
  for (const [name, fail] of [['up', false], ['down', true]] as const) {
    writeFileSync(join(root, 'server', 'agents', `${name}.ts`), [
      `import { createWorkspace, defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src/index.ts'))}`,
      `import { memory, workspaceJsonlMemoryStore } from ${JSON.stringify(join(REPO_ROOT, 'src/capabilities/index.ts'))}`,
      `import { countingEmbedder } from ${JSON.stringify(join(REPO_ROOT, 'test/search/vectors-embedder.ts'))}`,
      `const embed = countingEmbedder()`,
      `embed.fail = ${fail}`,
      `export default defineAgent({`,
      `  name: '${name}',`,
      `  driver: { run() {} },`,
      `  workspace: createWorkspace({ dir: '.agent/${name}' }),`,
      `  capabilities: [memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), embed, scope: ({ user }) => (user ? { agent: '${name}', user: user.id } : undefined) } } })],`,
      `})`,
    ].join('\n'))
  }
  writeFileSync(join(root, 'records.json'), JSON.stringify({
    format: 'vite-agent-memory/scope-export',
    version: 1,
    agent: 'notes',
    store: 'agent',
    scope: { agent: 'notes', user: 'ann' },
    exportedAt: '2026-01-05T10:00:00.000Z',
    records: [
      { id: 'mem_seat', store: 'agent', scope: { agent: 'notes', user: 'ann' }, kind: 'semantic', content: 'I prefer window seats', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: { source: 'api' }, audit: { via: 'api' }, createdAt: '2026-01-05T10:00:00.000Z', updatedAt: '2026-01-05T10:00:00.000Z', version: 1, status: 'active' },
      { id: 'mem_window', store: 'agent', scope: { agent: 'notes', user: 'ann' }, kind: 'semantic', content: 'The office window faces north', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: { source: 'api' }, audit: { via: 'api' }, createdAt: '2026-01-05T10:01:00.000Z', updatedAt: '2026-01-05T10:01:00.000Z', version: 1, status: 'active' },
    ],
  }))
  const imported = agentCli(['memory', 'import', '--agent', 'notes', '--user', 'ann', '--file', join(root, 'records.json')])
  expect(imported.stderr).toBe('')
  expect(imported.status).toBe(0)
}, 60_000)

describe('agent memory search', () => {
  it('several unquoted words are one query, the same as the quoted form', () => {
    const quoted = agentCli(['memory', 'search', 'window seats', '--agent', 'notes', '--user', 'ann', '--limit', '1'])
    const unquoted = agentCli(['memory', 'search', 'window', 'seats', '--agent', 'notes', '--user', 'ann', '--limit', '1'])
    expect(quoted.stdout.split('\n')[0]).toMatch(/^mem_seat {2}score [\d.]+ {2}I prefer window seats$/)
    expect(unquoted.stdout).toBe(quoted.stdout)
    expect(unquoted.status).toBe(0)
  }, 120_000)
})

describe('agent memory search on a store with embed', () => {
  it('when the embedder fails, the full-text results are printed with a warning naming its error; when it works, no warning', () => {
    for (const name of ['up', 'down']) expect(agentCli(['memory', 'import', '--agent', name, '--user', 'ann', '--file', join(root, 'records.json')]).status).toBe(0)
    const down = agentCli(['memory', 'search', 'window seats', '--agent', 'down', '--user', 'ann'])
    expect(down.status).toBe(0)
    expect(down.stdout.split('\n')[0]).toMatch(/^mem_seat {2}score [\d.]+ {2}I prefer window seats$/)
    expect(down.stderr).toMatch(/full-text results only: the store's embedder failed \(.*embedding service unavailable/)
    const up = agentCli(['memory', 'search', 'window seats', '--agent', 'up', '--user', 'ann'])
    expect(up.stdout.split('\n')[0]).toMatch(/^mem_seat {2}score [\d.]+ {2}I prefer window seats$/)
    expect(up.stderr).toBe('')
  }, 120_000)
})

describe('agent memory export', () => {
  it('--out in a folder that does not exist exits 1 with MEMORY_EXPORT_UNWRITABLE naming the folder and a fix', () => {
    const out = join(root, 'missing', 'ann.json')
    const { stderr, status } = agentCli(['memory', 'export', '--agent', 'notes', '--user', 'ann', '--out', out])
    expect(status).toBe(1)
    expect(stderr).toContain(`MEMORY_EXPORT_UNWRITABLE: cannot write the export to ${out}: the folder ${join(root, 'missing')} does not exist. Fix: pass --out a file path in an existing folder`)
    expect(stderr).not.toContain('INTERNAL_ERROR')
  })
})

describe('agent memory import --file', () => {
  it('a --file that does not exist exits 1 with MEMORY_IMPORT_NOT_FOUND naming its path; a file that is not JSON is MEMORY_IMPORT_INVALID', () => {
    const missing = agentCli(['memory', 'import', '--agent', 'notes', '--file', join(root, 'missing.json')])
    expect(missing.status).toBe(1)
    expect(missing.stderr).toContain(`MEMORY_IMPORT_NOT_FOUND: there is no file ${join(root, 'missing.json')}. Fix: check the path of --file`)
    expect(missing.stderr).not.toContain('ENOENT')
    writeFileSync(join(root, 'not-json.json'), 'hello')
    const garbled = agentCli(['memory', 'import', '--agent', 'notes', '--file', join(root, 'not-json.json')])
    expect(garbled.status).toBe(1)
    expect(garbled.stderr).toContain(`MEMORY_IMPORT_INVALID: ${join(root, 'not-json.json')} is not JSON`)
    expect(garbled.stderr).toContain('Fix: pass a file written by `agent memory export`')
  }, 120_000)

  it('--tenant imports into the scope of the user in that tenant', () => {
    const imported = agentCli(['memory', 'import', '--agent', 'notes', '--user', 'ann', '--tenant', 'acme', '--file', join(root, 'records.json')])
    expect(imported.stderr).toBe('')
    expect(imported.stdout).toContain('imported 2 records into store agent, scope {"agent":"notes","tenant":"acme","user":"ann"}')
    const listed = agentCli(['memory', 'list', '--agent', 'notes', '--user', 'ann'])
    expect(listed.stdout.trim().split('\n').at(-1)).toBe('2 records in store agent, scope {"agent":"notes","user":"ann"}')
    const exported = agentCli(['memory', 'export', '--agent', 'notes', '--user', 'ann', '--tenant', 'acme', '--out', join(root, 'acme-ann.json')])
    expect(exported.status).toBe(0)
    const data = JSON.parse(readFileSync(join(root, 'acme-ann.json'), 'utf8')) as { scope: unknown; records: Array<{ content: string }> }
    expect(data.scope).toEqual({ agent: 'notes', tenant: 'acme', user: 'ann' })
    expect(data.records.map(record => record.content)).toEqual(['I prefer window seats', 'The office window faces north'])
  }, 120_000)
})

describe('--tenant on every command that resolves a scope', () => {
  it('memory list and search take --tenant and act on that tenant\'s scope', () => {
    const imported = agentCli(['memory', 'import', '--agent', 'ten', '--user', 'ann', '--tenant', 'acme', '--file', join(root, 'records.json')])
    expect(imported.stderr).toBe('')
    const listed = agentCli(['memory', 'list', '--agent', 'ten', '--user', 'ann', '--tenant', 'acme'])
    expect(listed.stderr).toBe('')
    expect(listed.status).toBe(0)
    expect(listed.stdout.trim().split('\n').at(-1)).toBe('2 records in store agent, scope {"agent":"ten","tenant":"acme","user":"ann"}')
    const searched = agentCli(['memory', 'search', 'window', 'seats', '--agent', 'ten', '--user', 'ann', '--tenant', 'acme', '--limit', '1'])
    expect(searched.stderr).toBe('')
    expect(searched.stdout).toMatch(/^mem_seat {2}score [\d.]+ {2}I prefer window seats\n1 result in store agent, scope \{"agent":"ten","tenant":"acme","user":"ann"\}\n$/)
  }, 120_000)

  it('without --tenant, a scope naming the tenant fails with MEMORY_SCOPE_INVALID whose fix says to pass --tenant', () => {
    const listed = agentCli(['memory', 'list', '--agent', 'ten', '--user', 'ann'])
    expect(listed.status).toBe(1)
    expect(listed.stderr).toContain('MEMORY_SCOPE_INVALID: the scope of memory store "agent" field "tenant" is undefined, which would widen the scope. Fix: pass --tenant <id>: the agent\'s scope names the user\'s tenant, and this command ran without one\n')
  }, 120_000)

  it('agent dev runs for the user of --tenant; without it a run prints the error with pass --tenant', () => {
    const chat = agentCli(['dev', '--agent', 'ten', '--user', 'ann', '--tenant', 'acme'], 'hello\n')
    expect(chat.stderr).not.toContain('CLI_UNKNOWN_OPTION')
    expect(chat.status).toBe(0)
    expect(chat.stdout).toContain('tenant=acme')
    const untenanted = agentCli(['dev', '--agent', 'ten', '--user', 'ann'], 'hello\n')
    expect(untenanted.stdout).toContain('MEMORY_SCOPE_INVALID')
    expect(untenanted.stdout).toContain('Fix: pass --tenant <id>')
    // With --url the server's identify hook decides the tenant.
    const remote = agentCli(['dev', '--agent', 'ten', '--url', 'http://127.0.0.1:9', '--tenant', 'acme'], 'hello\n')
    expect(remote.status).toBe(1)
    expect(remote.stderr).toContain('CLI_INVALID_OPTION: --tenant names the tenant of an agent run in this process')
  }, 120_000)

  it('agent mcp serves the user of --tenant', () => {
    const served = agentCli(['mcp', '--agent', 'ten', '--user', 'ann', '--tenant', 'acme'])
    expect(served.stderr).not.toContain('CLI_UNKNOWN_OPTION')
    expect(served.stderr).toContain('agent mcp: serving ten as user ann of tenant acme over stdio')
    expect(served.status).toBe(0)
  }, 120_000)
})

describe('agent memory import --file of another user\'s export', () => {
  it('importing it twice into one user: the second import adds nothing and the scope keeps its record count', () => {
    const record = (id: string, content: string, extra: object) => ({ id, kind: 'semantic', content, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit: { via: 'api' }, createdAt: '2026-01-05T10:00:00.000Z', updatedAt: '2026-01-05T10:00:00.000Z', version: 1, status: 'active', ...extra })
    writeFileSync(join(root, 'route.json'), JSON.stringify({ store: 'agent', scope: { agent: 'notes', user: 'cat' }, records: [
      record('mem_route_old', 'My commute is by bus', { version: 2, status: 'superseded', supersededBy: 'mem_route_new', updatedAt: '2026-01-06T10:00:00.000Z' }),
      record('mem_route_new', 'My commute is by bike', { supersedes: ['mem_route_old'], createdAt: '2026-01-06T10:00:00.000Z', updatedAt: '2026-01-06T10:00:00.000Z' }),
    ] }))
    expect(agentCli(['memory', 'import', '--agent', 'notes', '--user', 'cat', '--file', join(root, 'route.json')]).status).toBe(0)
    expect(agentCli(['memory', 'export', '--agent', 'notes', '--user', 'cat', '--out', join(root, 'exp-route.json')]).status).toBe(0)
    const first = agentCli(['memory', 'import', '--agent', 'notes', '--user', 'ben', '--file', join(root, 'exp-route.json')])
    expect(first.stderr).toBe('')
    expect(first.stdout).toContain('imported 2 records into store agent, scope {"agent":"notes","user":"ben"} (0 already present, 0 duplicates, 2 renamed, 0 expired by retention)')
    const second = agentCli(['memory', 'import', '--agent', 'notes', '--user', 'ben', '--file', join(root, 'exp-route.json')])
    expect(second.stdout).toContain('imported 0 records into store agent, scope {"agent":"notes","user":"ben"} (2 already present, 0 duplicates, 0 renamed, 0 expired by retention)')
    const listed = agentCli(['memory', 'list', '--agent', 'notes', '--user', 'ben'])
    expect(listed.stdout.trim().split('\n').at(-1)).toBe('2 records in store agent, scope {"agent":"notes","user":"ben"}')
  }, 180_000)
})

describe('agent mcp', () => {
  it('--approval-timeout is taken (a bad value is CLI_INVALID_OPTION about it, not CLI_UNKNOWN_OPTION)', () => {
    const bad = agentCli(['mcp', '--agent', 'notes', '--approval-timeout', 'soon'])
    expect(bad.status).toBe(1)
    expect(bad.stderr).toContain('CLI_INVALID_OPTION: --approval-timeout soon is not a positive number')
    // Valid, over stdio with stdin at its end: the server starts, serves nobody, and exits 0.
    const good = agentCli(['mcp', '--agent', 'notes', '--approval-timeout', '2'])
    expect(good.stderr).not.toContain('CLI_UNKNOWN_OPTION')
    expect(good.stderr).toContain('agent mcp: serving notes as user demo over stdio')
    expect(good.status).toBe(0)
  }, 120_000)
})

describe('empty flag values', () => {
  it('--user "" (an unset shell variable) exits 1 with CLI_INVALID_OPTION before any run, in agent dev and agent memory', () => {
    const chat = agentCli(['dev', '--agent', 'notes', '--user', ''], 'window seats\n')
    expect(chat.status).toBe(1)
    expect(chat.stderr).toContain('CLI_INVALID_OPTION: --user is empty. Fix: pass a value to --user, or leave --user out for its default')
    expect(chat.stdout).not.toContain('RUN_OPTIONS_INVALID')
    const listed = agentCli(['memory', 'list', '--agent', 'notes', '--user', ''])
    expect(listed.status).toBe(1)
    expect(listed.stderr).toContain('CLI_INVALID_OPTION: --user is empty')
  }, 120_000)
})

describe('agent dev --url', () => {
  it('a server that cannot be reached prints CLI_SERVER_UNREACHABLE with a fix and exits 1', async () => {
    // A port that was just free: nothing listens on it once the server is closed.
    const { createServer } = await import('node:net')
    const server = createServer()
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    await new Promise<void>(resolve => server.close(() => resolve()))
    const chat = agentCli(['dev', '--agent', 'notes', '--url', `http://127.0.0.1:${port}`], 'window seats\n')
    expect(chat.stdout).toContain(`[error] CLI_SERVER_UNREACHABLE: cannot reach http://127.0.0.1:${port}/__agents/agents/notes/runs`)
    expect(chat.stdout).toContain('Fix: start the dev server (`npm run dev`) and pass its address to --url')
    expect(chat.status).toBe(1)
  }, 120_000)

  it('an address without the agent routes (a production prefix left out) or without the agent prints an actionable error and exits 1; with --token the banner names the token\'s user, not --user', async () => {
    // Another OS process (the CLI runs with spawnSync): `/api/agents/agents/notes/runs` answers an
    // unknown agent as the routes do, every other path h3's plain 404 of an app without those routes.
    const { spawn } = await import('node:child_process')
    const server = spawn(process.execPath, ['-e', [
      `const server = require('node:http').createServer((request, response) => {`,
      `  response.writeHead(404, { 'content-type': 'application/json' })`,
      `  response.end(JSON.stringify(request.url.startsWith('/api/agents/') ? { error: { code: 'AGENT_NOT_FOUND', message: 'AGENT_NOT_FOUND: there is no agent named "notes". Fix: use a name from GET /agents', why: 'there is no agent named "notes"', fix: 'use a name from GET /agents' } } : { status: 404, message: 'Cannot find any route matching [POST] ' + request.url }))`,
      `})`,
      `server.listen(0, '127.0.0.1', () => console.log(server.address().port))`,
    ].join('\n')], { stdio: ['ignore', 'pipe', 'inherit'] })
    try {
      const port = await new Promise<number>(resolve => server.stdout!.once('data', (chunk: Buffer) => resolve(Number(String(chunk).trim()))))
      // CONSOLA_LEVEL: consola prints no info lines (the banner) when it sees NODE_ENV=test.
      const prefixLeftOut = runAgentCli(['dev', '--agent', 'notes', '--url', `http://127.0.0.1:${port}`, '--token', 't', '--root', root], { input: 'window seats\n', env: { CONSOLA_LEVEL: '3' } })
      expect(prefixLeftOut.stdout).toContain(`[error] CLI_SERVER_NO_AGENT_ROUTES: http://127.0.0.1:${port}/__agents/agents/notes/runs answered HTTP 404 without an agent error`)
      expect(prefixLeftOut.stdout).toContain('for example --url http://localhost:3000/api/agents')
      expect(prefixLeftOut.stdout).not.toContain('INTERNAL_ERROR')
      expect(prefixLeftOut.status).toBe(1)
      // The server takes the user from the token: the banner does not claim the default --user.
      expect(prefixLeftOut.stdout + prefixLeftOut.stderr).toContain('as the user of --token.')
      const noSuchAgent = agentCli(['dev', '--agent', 'notes', '--url', `http://127.0.0.1:${port}/api/agents`, '--token', 't'], 'window seats\n')
      expect(noSuchAgent.stdout).toContain('[error] AGENT_NOT_FOUND: there is no agent named "notes"')
      expect(noSuchAgent.status).toBe(1)
    } finally {
      server.kill()
    }
  }, 120_000)
})

describe('agent memory erase --id', () => {
  it('an id that is not in the user\'s scope exits 1 with MEMORY_RECORD_NOT_FOUND and erases nothing; in the right scope it erases, and a second time it is not found', () => {
    const wrongUser = agentCli(['memory', 'erase', '--agent', 'notes', '--user', 'ben', '--id', 'mem_window', '--yes'])
    expect(wrongUser.stderr).toContain('MEMORY_RECORD_NOT_FOUND: store agent, scope {"agent":"notes","user":"ben"} has no record "mem_window" to erase, so nothing was erased')
    expect(wrongUser.stdout).not.toContain('erased 0 records')
    expect(wrongUser.status).toBe(1)
    expect(agentCli(['memory', 'list', '--agent', 'notes', '--user', 'ann']).stdout).toContain('The office window faces north')
    const erased = agentCli(['memory', 'erase', '--agent', 'notes', '--user', 'ann', '--id', 'mem_window', '--yes'])
    expect(erased.stdout).toContain('erased 1 record of store agent, scope {"agent":"notes","user":"ann"}: mem_window')
    expect(erased.status).toBe(0)
    const again = agentCli(['memory', 'erase', '--agent', 'notes', '--user', 'ann', '--id', 'mem_window', '--yes'])
    expect(again.stderr).toContain('MEMORY_RECORD_NOT_FOUND')
    expect(again.status).toBe(1)
  }, 120_000)
})

const postgres = await postgresTestDatabases('vam_cli_verify')

describe('agent memory verify --agent', () => {
  let sqliteFile = ''

  /** An agent module of the project at `root` with these stores (source text of each store's options). */
  function writeAgent(name: string, imports: string, stores: string) {
    writeFileSync(join(root, 'server', 'agents', `${name}.ts`), [
      `import { createWorkspace, defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src/index.ts'))}`,
      `import { ${imports} } from ${JSON.stringify(join(REPO_ROOT, 'src/capabilities/index.ts'))}`,
      `const scope = ({ user }) => (user ? { agent: '${name}', user: user.id } : undefined)`,
      `export default defineAgent({ name: '${name}', driver: { run() {} }, workspace: createWorkspace({ dir: '.agent/${name}' }), capabilities: [memory({ stores: { ${stores} } })] })`,
    ].join('\n'))
  }

  beforeAll(async () => {
    // `checked`: a JSONL store and a SQLite store, one record each, written through the stores' own API.
    sqliteFile = join(root, '.agent', 'checked.db')
    mkdirSync(join(root, '.agent'), { recursive: true })
    writeAgent('checked', 'memory, sqliteMemoryStore, workspaceJsonlMemoryStore', `agent: { adapter: workspaceJsonlMemoryStore(), scope }, facts: { adapter: sqliteMemoryStore({ file: '.agent/checked.db' }), scope }`)
    writeAgent('ephemeral', 'inMemoryMemoryStore, memory', `agent: { adapter: inMemoryMemoryStore(), scope }`)
    const { workspaceJsonlMemoryStore, sqliteMemoryStore } = await import('../../src/capabilities/index.ts')
    const { createWorkspace } = await import('../../src/index.ts')
    const target = { store: 'agent', scope: { agent: 'checked', user: 'ann' } }
    const jsonl = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'checked', workspace: createWorkspace({ dir: join(root, '.agent', 'checked') }), writable: true })
    await jsonl.append(target, { kind: 'semantic', content: 'ann likes green tea' }, { audit: { via: 'cli' } })
    const sqlite = sqliteMemoryStore({ file: sqliteFile })
    await sqlite.create().append({ store: 'facts', scope: target.scope }, { kind: 'semantic', content: 'ann lives in Oslo' }, { audit: { via: 'cli' } })
    await sqlite.close()
    const pg = postgres
    if (pg.reachable) {
      const url = await pg.fresh()
      const store = (await import('../../src/capabilities/index.ts')).postgresMemoryStore({ connectionString: url })
      const adapter = store.create()
      for (const content of ['bob plays chess', 'bob rides a bike']) await adapter.append({ store: 'agent', scope: { agent: 'pg', user: 'bob' } }, { kind: 'semantic', content }, { audit: { via: 'cli' } })
      await store.close()
      writeAgent('pg', 'memory, postgresMemoryStore', `agent: { adapter: postgresMemoryStore({ connectionString: ${JSON.stringify(url)} }), scope }`)
    }
  })

  it('checks every store of the agent: the JSONL log in its workspace and the SQLite store\'s event table, one line each, exit 0', () => {
    const { stdout, stderr, status } = agentCli(['memory', 'verify', '--agent', 'checked'])
    expect(stderr).toBe('')
    expect(status).toBe(0)
    expect(stdout.trim().split('\n')).toEqual([
      'ok: store "agent" (workspace-jsonl): 1 line verify in memory/memory.jsonl',
      'ok: store "facts" (sqlite): 1 line verify in sqlite event table',
    ])
  })

  it('a changed line in the SQLite event table exits 1 naming the store and the line; --store picks that store only', async () => {
    const Database = (await import('better-sqlite3')).default
    const db = new Database(sqliteFile)
    db.prepare('UPDATE memory_events SET line = replace(line, \'Oslo\', \'Bergen\')').run()
    db.close()
    try {
      const { stdout, status } = agentCli(['memory', 'verify', '--agent', 'checked', '--store', 'facts'])
      expect(status).toBe(1)
      expect(stdout).toMatch(/^BAD: store "facts" \(sqlite\): line 1 of sqlite event table: .+ \(1 lines\)$/m)
      expect(stdout).not.toContain('store "agent"')
    }
    finally {
      const undo = new Database(sqliteFile)
      undo.prepare('UPDATE memory_events SET line = replace(line, \'Bergen\', \'Oslo\')').run()
      undo.close()
    }
  })

  it('a Postgres store of the agent: its event table verifies', (context) => {
    if (!postgres.reachable) return context.skip()
    const { stdout, status } = agentCli(['memory', 'verify', '--agent', 'pg'])
    expect(status).toBe(0)
    expect(stdout.trim()).toBe('ok: store "agent" (postgres): 2 lines verify in postgres event table')
  })

  it('a store that keeps no log (in memory) exits 2 with MEMORY_VERIFY_UNSUPPORTED saying what verify checks', () => {
    const { stdout, stderr, status } = agentCli(['memory', 'verify', '--agent', 'ephemeral'])
    expect(status).toBe(2)
    expect(stderr).toContain('MEMORY_VERIFY_UNSUPPORTED')
    expect(stderr).toContain('store "agent" (in-memory)')
    expect(stderr).toContain('workspace JSONL logs and stores whose factory has verify() (SQLite, Postgres)')
    expect(stdout).not.toContain('ok:')
  })

  it('an agent directory with memory/ files prints one line per store: its in-memory store unsupported, each file store read-only with the reason; --store picks a file store', () => {
    mkdirSync(join(root, 'server', 'agents', 'slots', 'memory'), { recursive: true })
    writeFileSync(join(root, 'server', 'agents', 'slots', 'agent.ts'), [
      `import { defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src/index.ts'))}`,
      `import { inMemoryMemoryStore, memory, memorySlot } from ${JSON.stringify(join(REPO_ROOT, 'src/capabilities/index.ts'))}`,
      `export default defineAgent({ name: 'slots', driver: { run() {} }, capabilities: [memory({ stores: { agent: memorySlot({ adapter: inMemoryMemoryStore(), scope: 'global' }) } })] })`,
    ].join('\n'))
    writeFileSync(join(root, 'server', 'agents', 'slots', 'memory', 'policies.md'), '- Refunds over 100 EUR need a manager.\n')
    writeFileSync(join(root, 'server', 'agents', 'slots', 'memory', 'tone.json'), '["Be brief."]\n')
    const { stdout, stderr, status } = agentCli(['memory', 'verify', '--agent', 'slots'])
    expect(status).toBe(2)
    expect(stderr).toContain('store "agent" (in-memory): MEMORY_VERIFY_UNSUPPORTED')
    expect(stdout.trim().split('\n')).toEqual([
      'skip: store "policies" (memory-folder): read-only file memory/policies.md of the agent directory; its records are rebuilt from the file at each run and keep no log to verify (the file is the source: check it in version control)',
      'skip: store "tone" (memory-folder): read-only file memory/tone.json of the agent directory; its records are rebuilt from the file at each run and keep no log to verify (the file is the source: check it in version control)',
    ])
    const one = agentCli(['memory', 'verify', '--agent', 'slots', '--store', 'tone'])
    expect(one.stderr).toBe('')
    expect(one.status).toBe(0)
    expect(one.stdout).toMatch(/^skip: store "tone" \(memory-folder\): read-only file memory\/tone\.json/)
  })

  it('--dir beside --agent, and an unknown --store, exit 2 naming the problem', () => {
    const both = agentCli(['memory', 'verify', '--agent', 'checked', '--dir', root])
    expect(both.status).toBe(2)
    expect(both.stderr).toContain('CLI_INVALID_OPTION')
    const unknown = agentCli(['memory', 'verify', '--agent', 'checked', '--store', 'nope'])
    expect(unknown.status).toBe(2)
    expect(unknown.stderr).toContain('MEMORY_STORE_UNKNOWN')
    expect(unknown.stderr).toContain('facts')
  })
})

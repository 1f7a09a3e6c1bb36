/**
 * Retention: maxItems, maxAge, hardDelete, erasing a scope, export and import. Real
 * stores (the JSONL store on the fs driver, the in-memory store, SQLite for a cross-store import),
 * the real host with a scripted model for recall, the real CLI as a child process.
 */
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { defineAgent, runAgent } from '../../src/index.ts'
import { memory, resolveMemoryStore } from '../../src/memory/capability.ts'
import { verifyLog } from '../../src/memory/event-log.ts'
import { openMemoryStore } from '../../src/memory/open-store.ts'
import { applyMemoryRetention, compactMemoryScope, eraseMemoryScope, exportMemoryScope, importMemoryScope, MAX_ITEMS_REASON } from '../../src/memory/retention.ts'
import { parseMemoryOptions } from '../../src/memory/schemas.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import { sqliteMemoryStore } from '../../src/memory/stores/sqlite.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryAudit, MemoryRecord, MemoryRecordInput, MemoryStoreAdapter, MemoryStoreOptions, MemoryTarget } from '../../src/memory/types.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { Workspace } from '../../src/workspace/types.ts'
import { logText, tempDir } from '../faults/helpers.ts'

const ANN = { agent: 'support', user: 'ann' }
const target: MemoryTarget = { store: 'agent', scope: ANN }
const api = { audit: { via: 'api' } }

/** The store `agent` of `options`, resolved for user ann the way an invocation resolves it. */
async function resolved(options: Omit<MemoryStoreOptions, 'scope'>, workspace: Workspace): Promise<MemoryStoreAdapter> {
  const [config] = parseMemoryOptions({ stores: { agent: { scope: ANN, ...options } } })
  const result = await resolveMemoryStore(config!, { agent: 'support', run: { runId: 'r', threadId: 't' }, user: { id: 'ann' }, metadata: {}, workspace, writable: true })
  return result!.adapter
}

const note = (content: string, extra: Partial<MemoryRecordInput> = {}): MemoryRecordInput => ({ kind: 'semantic', content, ...extra })

async function contents(adapter: MemoryStoreAdapter, scope = target): Promise<string[]> {
  return (await adapter.export(scope)).filter((r) => r.status === 'active').map((r) => r.content)
}

describe('retention.maxItems', () => {
  it('maxItems expiry keeps pinned records: the oldest non-pinned active records expire first (fs JSONL)', async () => {
    const dir = tempDir('vam-ret-')
    const adapter = await resolved({ adapter: workspaceJsonlMemoryStore(), retention: { maxItems: 3 } }, createWorkspace({ dir }))
    await adapter.append(target, note('pinned oldest', { pinned: true, createdAt: '2024-01-01T00:00:00Z' }), api)
    await adapter.append(target, note('old', { createdAt: '2024-02-01T00:00:00Z' }), api)
    await adapter.append(target, note('middle', { createdAt: '2024-03-01T00:00:00Z' }), api)
    await adapter.append(target, note('new', { createdAt: '2024-04-01T00:00:00Z' }), api)
    expect(await contents(adapter)).toEqual(['pinned oldest', 'middle', 'new'])
    await adapter.append(target, note('pinned too', { pinned: true, createdAt: '2024-05-01T00:00:00Z' }), api)
    await adapter.append(target, note('pinned three', { pinned: true, createdAt: '2024-06-01T00:00:00Z' }), api)
    // Only pinned records are left, even though three pinned records fill the limit.
    expect(await contents(adapter)).toEqual(['pinned oldest', 'pinned too', 'pinned three'])
    await adapter.append(target, note('pinned four', { pinned: true }), api)
    expect(await contents(adapter)).toEqual(['pinned oldest', 'pinned too', 'pinned three', 'pinned four'])
    const expired = (await adapter.export(target)).filter((r) => r.status === 'deleted')
    expect(expired.map((r) => [r.content, r.deleteReason])).toEqual([['old', MAX_ITEMS_REASON], ['middle', MAX_ITEMS_REASON], ['new', MAX_ITEMS_REASON]])
    expect(expired[0]!.version).toBe(2)
    expect((await verifyLog(createWorkspace({ dir }), 'memory/memory.jsonl')).ok).toBe(true)
  })

  it('records expired by maxItems leave search, read, preload and preflight in the same run', async () => {
    const store = inMemoryMemoryStore()
    const seeded = await resolved({ adapter: store }, createWorkspace({ dir: tempDir() }))
    const old = await seeded.append(target, note('Old hobby: chess', { createdAt: '2020-01-01T00:00:00Z' }), api)
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'semantic', content: 'New hobby: climbing' } }] },
      { toolCalls: [{ toolName: 'memory_search', input: { query: 'hobby chess' } }, { toolName: 'memory_read', input: { id: old.id } }] },
      { text: 'done' },
    ])
    const agent = defineAgent({
      name: 'support', driver: { model }, workspace: createWorkspace({ dir: tempDir() }),
      capabilities: [memory({ stores: { agent: { adapter: store, scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined), write: { mode: 'tool' }, retention: { maxItems: 1 }, recall: { preload: { limit: 5 }, preflight: { limit: 5, conversationWindow: 4 } } } } })],
    })
    const result = await runAgent(agent, { input: 'what about chess as a hobby?', user: { id: 'ann' } }).result
    expect(result.status).toBe('completed')
    const system = (index: number) => model.prompts[index]!.filter((m) => m.role === 'system').map((m) => m.content).join('\n')
    expect(system(0)).toContain('Old hobby: chess')
    // After the remember expired it: not preloaded again, not found by preflight, search or read.
    expect(system(1)).not.toContain('Old hobby: chess')
    expect(system(2)).not.toContain('Old hobby: chess')
    const outputs = model.prompts[2]!.filter((m) => m.role === 'tool').flatMap((m) => m.content).map((part) => JSON.stringify((part as { output: unknown }).output))
    expect(outputs.join('\n')).not.toContain('Old hobby: chess')
    expect(outputs.join('\n')).toContain('MEMORY_RECORD_NOT_FOUND')
  })

  it('a custom adapter gets maxItems through export and delete; maxAge and hardDelete on it are MEMORY_RETENTION_UNSUPPORTED', async () => {
    const inner = await inMemoryMemoryStore().create({ store: 'agent', agent: 'a', writable: true })
    const custom: MemoryStoreAdapter = { search: inner.search, read: inner.read, append: inner.append, delete: inner.delete, export: inner.export }
    const adapter = await resolved({ adapter: custom, retention: { maxItems: 1 } }, createWorkspace({ dir: tempDir() }))
    await adapter.append(target, note('first', { createdAt: '2024-01-01T00:00:00Z' }), api)
    await adapter.append(target, note('second'), api)
    expect(await contents(adapter)).toEqual(['second'])
    await expect(resolved({ adapter: custom, retention: { hardDelete: true } }, createWorkspace({ dir: tempDir() }))).rejects.toMatchObject({ code: 'MEMORY_RETENTION_UNSUPPORTED' })
  })
})

describe('retention.maxAge', () => {
  it('records older than maxAge stop being returned at once, and compactMemoryScope erases them from the file', async () => {
    const dir = tempDir('vam-age-')
    const plain = await resolved({ adapter: workspaceJsonlMemoryStore() }, createWorkspace({ dir }))
    const ancient = await plain.append(target, note('ancient secret alpha', { createdAt: '2001-01-01T00:00:00Z', pinned: true }), api)
    await plain.append(target, note('recent alpha'), api)
    const adapter = await resolved({ adapter: workspaceJsonlMemoryStore(), retention: { maxAge: '30d' } }, createWorkspace({ dir }))
    expect((await adapter.search(target, { query: 'alpha' })).map((h) => h.record.content)).toEqual(['recent alpha'])
    expect((await adapter.search(target, { query: 'alpha', after: '2000-01-01' })).map((h) => h.record.content)).toEqual(['recent alpha'])
    expect(await adapter.read(target, ancient.id)).toBeUndefined()
    expect((await adapter.export(target)).map((r) => r.content)).toEqual(['recent alpha'])
    expect(logText(dir)).toContain('ancient secret')
    const result = await compactMemoryScope(adapter, target, { audit: { via: 'cli' } })
    expect(result.erased).toEqual([ancient.id])
    expect(logText(dir)).not.toContain('ancient secret')
    expect((await verifyLog(createWorkspace({ dir }), 'memory/memory.jsonl')).ok).toBe(true)
    expect(await plain.read(target, ancient.id)).toBeUndefined()
  })

  it('the first write through a store with maxAge erases the scope\'s expired records', async () => {
    const dir = tempDir('vam-age-')
    const plain = await resolved({ adapter: workspaceJsonlMemoryStore() }, createWorkspace({ dir }))
    await plain.append(target, note('stale fact', { createdAt: '2001-01-01T00:00:00Z' }), api)
    const adapter = await resolved({ adapter: workspaceJsonlMemoryStore(), retention: { maxAge: 86_400_000 } }, createWorkspace({ dir }))
    await adapter.append(target, note('fresh fact'), api)
    expect(logText(dir)).not.toContain('stale fact')
    expect(await contents(plain)).toEqual(['fresh fact'])
  })
})

describe('retention.hardDelete and erasing a scope', () => {
  it('with hardDelete, memory_delete erases the content from the log file; the chain still verifies', async () => {
    const dir = tempDir('vam-hard-')
    const workspace = createWorkspace({ dir })
    const model = scriptedModel([
      { toolCalls: [{ toolName: 'memory_remember', input: { kind: 'profile', content: 'Passport number X1234567' } }] },
      (prompt) => {
        const created = JSON.stringify(prompt.at(-1))
        const id = /mem_[0-9a-f]{32}/.exec(created)![0]
        return { toolCalls: [{ toolName: 'memory_delete', input: { id } }] }
      },
      { toolCalls: [{ toolName: 'memory_search', input: { query: 'passport' } }] },
      { text: 'erased' },
    ])
    const agent = defineAgent({ name: 'support', driver: { model }, workspace, capabilities: [memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ANN, write: { mode: 'tool' }, retention: { hardDelete: true } } } })] })
    expect((await runAgent(agent, { input: 'forget my passport' }).result).status).toBe('completed')
    const outputs = model.prompts[3]!.filter((m) => m.role === 'tool').flatMap((m) => m.content).map((part) => (part as { output: { value?: unknown } }).output)
    expect(JSON.stringify(outputs)).toContain('"erased":true')
    expect(JSON.stringify(outputs)).toContain('"results":[]')
    expect(logText(dir)).not.toContain('X1234567')
    expect((await verifyLog(createWorkspace({ dir }), 'memory/memory.jsonl')).ok).toBe(true)
  })

  it('an API delete through a resolved store with hardDelete erases too, and returns the record as deleted', async () => {
    const dir = tempDir('vam-hard-')
    const adapter = await resolved({ adapter: workspaceJsonlMemoryStore(), retention: { hardDelete: true } }, createWorkspace({ dir }))
    const record = await adapter.append(target, note('card 4111 1111'), api)
    const deleted = await adapter.delete(target, record.id, { audit: { via: 'api' }, reason: 'user asked' })
    expect(deleted).toMatchObject({ id: record.id, status: 'deleted', deleteReason: 'user asked' })
    expect(await adapter.read(target, record.id)).toBeUndefined()
    expect(await adapter.delete(target, record.id, { audit: { via: 'api' } })).toBeUndefined()
    expect(logText(dir)).not.toContain('4111')
  })

  it('eraseMemoryScope erases every record of one scope, reports the count, is idempotent and leaves other scopes alone', async () => {
    const dir = tempDir('vam-erase-')
    const adapter = await resolved({ adapter: workspaceJsonlMemoryStore() }, createWorkspace({ dir }))
    const bob: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'bob' } }
    const a = await adapter.append(target, note('ann one'), api)
    await adapter.append(target, note('ann two', { supersedes: [a.id] }), api)
    const gone = await adapter.append(target, note('ann three'), api)
    await adapter.delete(target, gone.id, api)
    await adapter.append(bob, note('bob one'), api)
    expect(await eraseMemoryScope(adapter, target, { audit: { via: 'cli' } })).toMatchObject({ erased: 3 })
    expect(await adapter.export(target)).toEqual([])
    expect(await adapter.search(target, { query: 'ann' })).toEqual([])
    expect(await adapter.read(target, a.id)).toBeUndefined()
    expect(logText(dir)).not.toContain('ann ')
    expect(await contents(adapter, bob)).toEqual(['bob one'])
    expect(await eraseMemoryScope(adapter, target, { audit: { via: 'cli' } })).toMatchObject({ erased: 0, ids: [] })
    expect((await verifyLog(createWorkspace({ dir }), 'memory/memory.jsonl')).ok).toBe(true)
    // Still writable afterwards.
    expect((await adapter.append(target, note('ann again'), api)).content).toBe('ann again')
  })
})

describe('export and import', () => {
  /** A scope with every status and every field: active, superseded, deleted, superseded then deleted, an episode, keywords. */
  async function richScope(adapter: MemoryStoreAdapter) {
    const audit = { via: 'tool', agent: 'support', runId: 'run_9', threadId: 'th_9', user: 'ann', approver: 'ann', approvalReason: 'ok' }
    const first = await adapter.append(target, note('Lives in Oslo', { createdAt: '2023-05-01T10:00:00Z', tags: ['home'], provenance: { source: 'tool', runId: 'run_9' }, confidence: 0.9, title: 'Home' }), { audit })
    const second = await adapter.append(target, note('Lives in Bergen', { supersedes: [first.id], keywords: ['bergen'], topics: ['home'] }), { audit })
    const episodic = await adapter.append(target, { kind: 'episodic', content: 'Reset a password', episode: { observation: 'locked out', result: 'reset worked' }, pinned: true, metadata: { ticket: 7 } }, { audit: { via: 'api' } })
    const deleted = await adapter.append(target, note('Old phone number'), { audit })
    await adapter.delete(target, deleted.id, { audit: { via: 'tool' }, reason: 'outdated' })
    const third = await adapter.append(target, note('Lives in Tromsø', { supersedes: [second.id] }), { audit })
    await adapter.delete(target, second.id, { audit: { via: 'api' } })
    return { first, second, third, episodic, deleted }
  }

  /** The records as an import writes them: the importer's audit, the file's audit kept as provenance. */
  const asImported = (records: MemoryRecord[], audit: MemoryAudit, file: { exportedAt: string; agent?: string }) => records.map(record => ({ ...record, audit, provenance: { ...record.provenance, imported: { audit: record.audit, exportedAt: file.exportedAt, ...(file.agent ? { agent: file.agent } : {}) } } }))

  it('export then import into an empty workspace reproduces the scope exactly (ids, timestamps, provenance, status); the audit names the importer, the file\'s audit is kept as provenance', async () => {
    const source = await resolved({ adapter: workspaceJsonlMemoryStore() }, createWorkspace({ dir: tempDir('vam-src-') }))
    await richScope(source)
    const exported = await exportMemoryScope(source, target, { agent: 'support' })
    expect(exported.records).toHaveLength(5)
    const file = JSON.parse(JSON.stringify(exported))
    const dir = tempDir('vam-dst-')
    const destination = await resolved({ adapter: workspaceJsonlMemoryStore() }, createWorkspace({ dir }))
    const importer = { via: 'import', user: 'ann' }
    expect(await importMemoryScope(destination, target, file, { audit: importer })).toEqual({ added: 5, skipped: 0, duplicates: 0, renamed: 0, expired: 0 })
    const expected = asImported(await source.export(target), importer, file)
    expect(await destination.export(target)).toEqual(expected)
    // A fresh replay of the new file gives the same records.
    const replayed = await resolved({ adapter: workspaceJsonlMemoryStore() }, createWorkspace({ dir }))
    expect(await replayed.export(target)).toEqual(expected)
    expect((await verifyLog(createWorkspace({ dir }), 'memory/memory.jsonl')).ok).toBe(true)
    // Search works on the imported records, episode text included.
    expect((await replayed.search(target, { query: 'reset worked' })).map((h) => h.record.kind)).toEqual(['episodic'])
  })

  it('re-importing the same export adds nothing; an SQLite store imports a JSONL export the same way', async () => {
    const source = await resolved({ adapter: inMemoryMemoryStore() }, createWorkspace({ dir: tempDir() }))
    await richScope(source)
    const file = await exportMemoryScope(source, target)
    const destination = await resolved({ adapter: sqliteMemoryStore({ file: join(tempDir('vam-sqlite-'), 'memory.db') }) }, createWorkspace({ dir: tempDir() }))
    expect((await importMemoryScope(destination, target, file, { audit: { via: 'import' } })).added).toBe(5)
    expect(await importMemoryScope(destination, target, file, { audit: { via: 'import' } })).toEqual({ added: 0, skipped: 5, duplicates: 0, renamed: 0, expired: 0 })
    expect(await destination.export(target)).toEqual(asImported(await source.export(target), { via: 'import' }, file))
  })

  it('importing into another scope of the same log renames clashing ids and skips active duplicates; two users keep two records', async () => {
    const adapter = await resolved({ adapter: inMemoryMemoryStore() }, createWorkspace({ dir: tempDir() }))
    const { third } = await richScope(adapter)
    const bob: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'bob' } }
    await adapter.append(bob, note('lives in TROMSØ'), api)
    const result = await importMemoryScope(adapter, bob, await exportMemoryScope(adapter, target), { audit: { via: 'import' } })
    expect(result).toEqual({ added: 4, skipped: 0, duplicates: 1, renamed: 4, expired: 0 })
    const records = await adapter.export(bob)
    expect(records.filter((r) => r.status === 'active').map((r) => r.content).sort()).toEqual(['Reset a password', 'lives in TROMSØ'])
    expect(records.some((r) => r.id === third.id)).toBe(false)
    // The superseded chain now points at bob's existing record.
    const bergen = records.find((r) => r.content === 'Lives in Bergen')!
    expect(records.find((r) => r.id === bergen.supersededBy)!.content).toBe('lives in TROMSØ')
    expect(await contents(adapter)).toEqual(['Reset a password', 'Lives in Tromsø'])
  })

  it('a malformed export is MEMORY_IMPORT_INVALID naming the path, and nothing is written', async () => {
    const adapter = await resolved({ adapter: inMemoryMemoryStore() }, createWorkspace({ dir: tempDir() }))
    const file = await exportMemoryScope(adapter, target)
    const bad = { ...file, records: [{ id: 'mem_1', kind: 'semantic', content: 'x', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit: { via: 'api' }, createdAt: '2024-01-01T00:00:00Z', updatedAt: '2024-01-01T00:00:00Z', version: 2, status: 'active' }] }
    await expect(importMemoryScope(adapter, target, bad, { audit: { via: 'import' } })).rejects.toMatchObject({ code: 'MEMORY_IMPORT_INVALID', message: expect.stringContaining('records.0.version') })
    expect(await adapter.export(target)).toEqual([])
  })

  it('a store with maxItems applies it after an import', async () => {
    const source = await resolved({ adapter: inMemoryMemoryStore() }, createWorkspace({ dir: tempDir() }))
    for (const [i, day] of ['01', '02', '03'].entries()) await source.append(target, note(`fact ${i}`, { createdAt: `2024-01-${day}T00:00:00Z` }), api)
    const destination = await resolved({ adapter: inMemoryMemoryStore(), retention: { maxItems: 2 } }, createWorkspace({ dir: tempDir() }))
    expect((await importMemoryScope(destination, target, await exportMemoryScope(source, target), { audit: { via: 'import' } })).expired).toBe(1)
    expect(await contents(destination)).toEqual(['fact 1', 'fact 2'])
  })

  it('agent memory export then agent memory import --file into an empty workspace reproduces the scope (real CLI)', async () => {
    const root = join(import.meta.dirname, '..', '..')
    const cli = (args: string[], workspace: string) => spawnSync(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), ...args, '--agent', 'support', '--root', 'playground', '--user', 'ann'], {
      cwd: root, encoding: 'utf8', timeout: 60_000, env: { ...process.env, AGENT_WORKSPACE_DIR: workspace, SUPPORT_AGENT_DRIVER: 'scripted', OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', NO_COLOR: '1' },
    })
    const sourceDir = tempDir('vam-cli-src-')
    // Seed the source scope the way the CLI resolves it (same agent module, same workspace folder).
    process.env.AGENT_WORKSPACE_DIR = sourceDir
    const agent = (await import('../../playground/server/agents/support.ts')).default
    delete process.env.AGENT_WORKSPACE_DIR
    const { adapter: seed, target: scope } = await openMemoryStore(agent, { user: { id: 'ann' } })
    const kept = await seed.append(scope, note('Prefers window seats', { createdAt: '2024-02-02T09:00:00Z' }), api)
    const dropped = await seed.append(scope, note('Prefers aisle seats'), api)
    await seed.delete(scope, dropped.id, { audit: { via: 'api' }, reason: 'changed mind' })
    const out = join(tempDir('vam-cli-out-'), 'ann.json')
    const exported = cli(['memory', 'export', '--out', out], sourceDir)
    expect(exported.stderr).toBe('')
    expect(exported.stdout).toContain('exported 2 records')
    const file = JSON.parse(readFileSync(out, 'utf8'))
    expect(file.records.map((r: { id: string }) => r.id)).toEqual([kept.id, dropped.id])
    const emptyDir = tempDir('vam-cli-dst-')
    const imported = cli(['memory', 'import', '--file', out], emptyDir)
    expect(imported.stdout).toContain('imported 2 records')
    const again = cli(['memory', 'import', '--file', out], emptyDir)
    expect(again.stdout).toContain('imported 0 records')
    expect(again.stdout).toContain('2 already present')
    const reexported = cli(['memory', 'export'], emptyDir)
    const copy = JSON.parse(reexported.stdout)
    expect(copy.records).toEqual(asImported(file.records, { via: 'import', agent: 'support', user: 'ann' }, file))
    // agent memory erase refuses without --yes, then erases the scope and says what it removed.
    expect(cli(['memory', 'erase'], emptyDir).stderr).toContain('CLI_CONFIRMATION_REQUIRED')
    const erased = cli(['memory', 'erase', '--yes'], emptyDir)
    expect(erased.stdout).toContain(`erased 2 records of store agent, scope {"agent":"support","user":"ann"}: ${kept.id}, ${dropped.id}`)
    expect(readFileSync(join(emptyDir, 'memory/memory.jsonl'), 'utf8')).not.toContain('window seats')
  }, 90_000)
})

describe('applyMemoryRetention', () => {
  it('runs maxItems with hardDelete as erasure and reports the ids', async () => {
    const adapter = await resolved({ adapter: inMemoryMemoryStore() }, createWorkspace({ dir: tempDir() }))
    const a = await adapter.append(target, note('a', { createdAt: '2024-01-01T00:00:00Z' }), api)
    await adapter.append(target, note('b', { createdAt: '2024-01-02T00:00:00Z' }), api)
    expect(await applyMemoryRetention(adapter, target, { maxItems: 1, hardDelete: true }, { audit: { via: 'cli' } })).toEqual({ deleted: [], erased: [a.id] })
    expect((await adapter.export(target)).map((r) => r.content)).toEqual(['b'])
  })
})

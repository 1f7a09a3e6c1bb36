import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { runAgentCli, type AgentCliResult } from '../helpers/agent-cli.ts'
import { REDIS_URL, useRedisProbe } from '../helpers/redis.ts'
import { REPO_ROOT } from './locomo.ts'

/**
 * The `agent` commands on an agent whose workspace is on unstorage's Redis driver, run as a real
 * child process: each prints its answer and exits (the driver's ioredis connection is closed when
 * the command ends; were it left open the child would never exit and be killed at the timeout,
 * with `status` null).
 */
const PREFIX = `vam-cli-redis-${process.pid}`
const redis = useRedisProbe(PREFIX, 'the agent CLI on a Redis workspace')
let root = ''

function agentCli(args: string[], input = ''): AgentCliResult {
  return runAgentCli([...args, '--root', root], { input, timeoutMs: 30_000 })
}

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'vam-cli-redis-'))
  mkdirSync(join(root, 'server', 'agents'), { recursive: true })
  writeFileSync(join(root, 'server', 'agents', 'shared.ts'), [
    // The project lives in a temporary folder: the repository's unstorage, by path.
    `import { createStorage } from ${JSON.stringify(join(REPO_ROOT, 'node_modules/unstorage/dist/index.mjs'))}`,
    `import redisDriver from ${JSON.stringify(join(REPO_ROOT, 'node_modules/unstorage/drivers/redis.mjs'))}`,
    `import { createWorkspace, defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src/index.ts'))}`,
    `import { memory, workspaceJsonlMemoryStore } from ${JSON.stringify(join(REPO_ROOT, 'src/capabilities/index.ts'))}`,
    `export default defineAgent({`,
    `  name: 'shared',`,
    `  driver: { async run({ input, tools, write }) { const found = await tools.memory_search.call({ query: input }); write(JSON.stringify(found.output)) } },`,
    `  workspace: createWorkspace({ storage: createStorage({ driver: redisDriver({ url: ${JSON.stringify(REDIS_URL)}, base: ${JSON.stringify(PREFIX)} }) }) }),`,
    `  capabilities: [memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => (user ? { agent: 'shared', user: user.id } : undefined), write: { mode: 'tool' } } } })],`,
    `})`,
  ].join('\n'))
  writeFileSync(join(root, 'records.json'), JSON.stringify({
    format: 'vite-agent-memory/scope-export',
    version: 1,
    agent: 'shared',
    store: 'agent',
    scope: { agent: 'shared', user: 'ann' },
    exportedAt: '2026-01-05T10:00:00.000Z',
    records: [
      { id: 'mem_seat', store: 'agent', scope: { agent: 'shared', user: 'ann' }, kind: 'semantic', content: 'I prefer window seats', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: { source: 'api' }, audit: { via: 'api' }, createdAt: '2026-01-05T10:00:00.000Z', updatedAt: '2026-01-05T10:00:00.000Z', version: 1, status: 'active' },
    ],
  }))
})

describe('the agent CLI on a Redis workspace', () => {
  it('memory import, list, search and export exit once they printed their answer', (context) => {
    if (!redis.probe) return context.skip()
    const imported = agentCli(['memory', 'import', '--agent', 'shared', '--user', 'ann', '--file', join(root, 'records.json')])
    expect([imported.status, imported.stderr]).toEqual([0, ''])
    expect(imported.stdout).toContain('imported 1 record into store agent')
    const listed = agentCli(['memory', 'list', '--agent', 'shared', '--user', 'ann'])
    expect([listed.status, listed.stdout.trim().split('\n').at(-1)]).toEqual([0, '1 record in store agent, scope {"agent":"shared","user":"ann"}'])
    const searched = agentCli(['memory', 'search', 'window', 'seats', '--agent', 'shared', '--user', 'ann'])
    expect([searched.status, searched.stdout.split('\n')[0]]).toEqual([0, expect.stringContaining('mem_seat')])
    const exported = agentCli(['memory', 'export', '--agent', 'shared', '--user', 'ann'])
    expect(exported.status).toBe(0)
    expect(JSON.parse(exported.stdout).records.map((record: { id: string }) => record.id)).toEqual(['mem_seat'])
  }, 120_000)

  it('agent dev exits at the end of its input, after answering from the Redis log', (context) => {
    if (!redis.probe) return context.skip()
    agentCli(['memory', 'import', '--agent', 'shared', '--user', 'ann', '--file', join(root, 'records.json')])
    const chat = agentCli(['dev', '--agent', 'shared', '--user', 'ann'], 'window seats\n')
    expect(chat.status).toBe(0)
    expect(chat.stdout).toContain('"content":"I prefer window seats"')
  }, 60_000)

  it('agent info names the workspace by its unstorage driver, not as in memory', (context) => {
    if (!redis.probe) return context.skip()
    const info = agentCli(['info', '--agent', 'shared'])
    expect(info.status).toBe(0)
    expect(info.stdout).toContain('workspace: unstorage redis driver\n')
  })
})

import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { findAgent, listAgents, loadAgent, resolveRoot } from '../../src/cli/load-agent.ts'
import { runAgentCli } from '../helpers/agent-cli.ts'
import { REPO_ROOT } from './locomo.ts'

function project(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'vam-cli-'))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true })
    writeFileSync(join(root, path), text)
  }
  return root
}

describe('finding agents', () => {
  it('the default root is cwd, or ./playground when only it has server/agents', () => {
    expect(resolveRoot(undefined, REPO_ROOT)).toBe(join(REPO_ROOT, 'playground'))
    const root = project({ 'server/agents/a.ts': '' })
    expect(resolveRoot(undefined, root)).toBe(root)
    expect(resolveRoot('sub', root)).toBe(join(root, 'sub'))
  })

  it('agents are <name>.ts files and <name>/agent.ts folders', () => {
    const root = project({ 'server/agents/alpha.ts': '', 'server/agents/beta/agent.ts': '', 'server/agents/beta/helper.ts': '', 'server/agents/types.d.ts': '' })
    expect(listAgents(root).map(agent => agent.name)).toEqual(['alpha', 'beta'])
    expect(findAgent(root, 'beta').file).toBe(join(root, 'server/agents/beta/agent.ts'))
  })

  it('an unknown agent is AGENT_NOT_FOUND listing the agents that exist', () => {
    const root = project({ 'server/agents/alpha.ts': '', 'server/agents/beta.ts': '' })
    expect(() => findAgent(root, 'gamma')).toThrow(/AGENT_NOT_FOUND: .*agents found: alpha, beta/)
  })

  it('a module whose default export is not an agent is AGENT_INVALID_MODULE', async () => {
    const root = project({ 'server/agents/odd.ts': 'export default { hello: "world" } as const\n' })
    await expect(loadAgent(root, 'odd')).rejects.toThrow(/AGENT_INVALID_MODULE/)
  })

  it('a module that throws while loading is AGENT_LOAD_FAILED', async () => {
    const root = project({ 'server/agents/broken.ts': 'throw new Error("boom")\nexport default 1\n' })
    await expect(loadAgent(root, 'broken')).rejects.toThrow(/AGENT_LOAD_FAILED: .*boom/)
  })

  it('a module that throws an AgentError is AGENT_LOAD_FAILED with the inner code and why, and the inner fix as its one fix', async () => {
    const errors = JSON.stringify(join(REPO_ROOT, 'src/errors.ts'))
    const root = project({ 'server/agents/stores.ts': `import { agentError } from ${errors}\nthrow agentError('MEMORY_STORES_REQUIRED', 'memory() needs at least one store', 'pass stores: { notes: workspaceJsonlMemoryStore() }')\nexport default 1\n` })
    const error = await loadAgent(root, 'stores').then(() => undefined, (caught: unknown) => caught as { code: string; why: string; fix: string; message: string })
    expect(error?.code).toBe('AGENT_LOAD_FAILED')
    expect(error?.why).toMatch(/stores\.ts failed: MEMORY_STORES_REQUIRED: memory\(\) needs at least one store$/)
    expect(error?.fix).toBe('pass stores: { notes: workspaceJsonlMemoryStore() }')
    expect(error?.message.match(/Fix:/g)).toHaveLength(1)
  })

  it('a module importing an optional peer that is not installed (unstorage\'s Redis driver without ioredis) is AGENT_LOAD_FAILED with DEPENDENCY_MISSING and the npm install command', async () => {
    // A real CLI process (vitest's resolver would find the repository's ioredis): the project lives
    // in the temp folder, where no node_modules holds ioredis, so Node's import fails as in an app.
    const root = project({ 'server/agents/shared.ts': 'import Redis from "ioredis"\nexport default Redis\n' })
    const { stderr, status } = runAgentCli(['info', '--agent', 'shared', '--root', root])
    expect(stderr).toContain('AGENT_LOAD_FAILED: loading')
    expect(stderr).toContain('DEPENDENCY_MISSING: unstorage\'s Redis driver (unstorage/drivers/redis) needs the package "ioredis", an optional peer dependency of vite-agent-memory that is not installed in this app. Fix: install it beside vite-agent-memory: npm install ioredis@"^5.4.2"')
    expect(status).toBe(1)
  }, 120_000)

  it('an agent left with the default name takes its file name', async () => {
    const root = project({ 'server/agents/helper.ts': 'export default { kind: "agent", name: "agent", instructions: "", driver: { run() {} }, workspace: undefined, capabilities: [], tools: {} }\n' })
    const { agent } = await loadAgent(root, 'helper')
    expect(agent.name).toBe('helper')
  })
})

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { directoryAgentSource } from '../../src/cli/commands/studio.ts'
import { createAgentRoutes } from '../../src/server/routes.ts'
import { REPO_ROOT } from '../cli/locomo.ts'

/**
 * `GET /agents` over a real folder of agent modules (the source `agent studio` and the Vite plugin
 * read), one of which throws while loading: that one is listed with its error, the others as usual.
 */
const dirs: string[] = []
afterAll(() => dirs.forEach(dir => rmSync(dir, { recursive: true, force: true })))

describe('GET /agents', () => {
  it('an agent module that fails to load is listed with its AGENT_LOAD_FAILED error and does not hide the agents that load', async () => {
    const root = mkdtempSync(join(tmpdir(), 'vam-agents-list-'))
    dirs.push(root)
    mkdirSync(join(root, 'server', 'agents'), { recursive: true })
    const imports = [
      `import { defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src/index.ts'))}`,
      `import { memory, workspaceJsonlMemoryStore } from ${JSON.stringify(join(REPO_ROOT, 'src/capabilities/index.ts'))}`,
    ]
    writeFileSync(join(root, 'server', 'agents', 'good.ts'), [...imports, `export default defineAgent({ driver: { run() {} }, capabilities: [memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: { agent: 'good' } } } })] })`].join('\n'))
    // memory() without options throws MEMORY_STORES_REQUIRED while the module loads.
    writeFileSync(join(root, 'server', 'agents', 'broken.ts'), [...imports, `export default defineAgent({ driver: { run() {} }, capabilities: [(memory as () => never)()] })`].join('\n'))
    const app = createAgentRoutes({ agents: directoryAgentSource(root), identify: () => ({ id: 'ann' }), prefix: '/__agents', mode: 'dev' })
    const response = await app.fetch(new Request('http://localhost/__agents/agents'))
    expect(response.status).toBe(200)
    const { agents } = await response.json() as { agents: Array<{ name: string; driver: string; capabilities: string[]; error?: { code: string; message: string } }> }
    expect(agents.map(agent => [agent.name, agent.driver, agent.capabilities, agent.error?.code])).toEqual([
      ['broken', 'unavailable', [], 'AGENT_LOAD_FAILED'],
      ['good', 'custom-run', ['memory'], undefined],
    ])
    expect(agents[0]!.error!.message).toContain('MEMORY_STORES_REQUIRED')
  })
})

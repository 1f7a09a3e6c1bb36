import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { runAgentCli, type AgentCliResult } from '../helpers/agent-cli.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

// Each test launches the CLI as child processes, 1.2-1.6 s of CPU each (tsx loading src/): at a load
// of 15-20 on two cores a launch takes 5-8 s of wall time, so several exceed vitest's 30 s. Every
// launch keeps its own spawn timeout (60 s), which still fails a launch that hangs.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 })

function memoryCli(args: string[]): AgentCliResult {
  return runAgentCli(['memory', ...args])
}

async function logWithTwoRecords(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'vam-cli-log-'))
  const adapter = await workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true })
  for (const content of ['first fact', 'second fact']) await adapter.append({ store: 'agent', scope: { agent: 'support' } }, { kind: 'semantic', content }, { audit: { via: 'cli' } })
  return dir
}

describe('agent memory verify', () => {
  it('a log that verifies exits 0 and says how many lines', async () => {
    const dir = await logWithTwoRecords()
    const { stdout, status } = memoryCli(['verify', '--dir', dir])
    expect(status).toBe(0)
    expect(stdout).toContain('ok: 2 lines verify in memory/memory.jsonl')
  })

  it('a changed line exits 1 naming its line number', async () => {
    const dir = await logWithTwoRecords()
    const file = join(dir, 'memory', 'memory.jsonl')
    writeFileSync(file, readFileSync(file, 'utf8').replace('second fact', 'second FACT'))
    const { stdout, status } = memoryCli(['verify', '--dir', dir])
    expect(status).toBe(1)
    expect(stdout).toMatch(/^BAD: line 2 of memory\/memory\.jsonl: /m)
  })

  it('a log that does not exist exits 2 with MEMORY_LOG_NOT_FOUND instead of "0 lines verify"', () => {
    const { stdout, stderr, status } = memoryCli(['verify', '--dir', mkdtempSync(join(tmpdir(), 'vam-cli-empty-'))])
    expect(status).toBe(2)
    expect(stderr).toContain('MEMORY_LOG_NOT_FOUND')
    expect(stdout).not.toContain('ok:')
  })
})

describe('agent memory compact', () => {
  it('a log that does not exist or a --path outside the workspace exits 2 like verify; a corrupt log exits 1', async () => {
    const missing = memoryCli(['compact', '--dir', mkdtempSync(join(tmpdir(), 'vam-cli-empty-'))])
    expect(missing.stderr).toContain('MEMORY_LOG_NOT_FOUND')
    expect(missing.status).toBe(2)
    const outside = memoryCli(['compact', '--path', '../memory.jsonl'])
    expect(outside.stderr).toContain('MEMORY_STORE_PATH_INVALID')
    expect(outside.status).toBe(2)
    const dir = await logWithTwoRecords()
    const file = join(dir, 'memory', 'memory.jsonl')
    writeFileSync(file, readFileSync(file, 'utf8').replace('second fact', 'second FACT'))
    const corrupt = memoryCli(['compact', '--dir', dir])
    expect(corrupt.stderr).toContain('MEMORY_LOG_CORRUPT')
    expect(corrupt.status).toBe(1)
  })
})

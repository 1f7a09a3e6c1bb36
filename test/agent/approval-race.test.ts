/**
 * Approvals are decided once across processes and instances (docs/security.md): a real second OS
 * process over one fs workspace, and two workspace instances (two ioredis clients) over one real
 * Redis, approving the same approvals at the same time. The tool's side effect is a line in a file
 * outside the memory log, so nothing but the decision claim can stop a second run.
 */
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { resolveApproval } from '../../src/agent/approvals.ts'
import { runAgent } from '../../src/agent/run.ts'
import { redisWorkspace, useRedisProbe } from '../helpers/redis.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { rendezvousWorkspace, shipAgent, sideEffects } from './fixtures/ship-agent.ts'

const CHILD = fileURLToPath(new URL('./fixtures/decide-child.ts', import.meta.url))
const dirs: string[] = []
afterAll(() => dirs.forEach(dir => rmSync(dir, { recursive: true, force: true })))
function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-race-'))
  dirs.push(dir)
  return dir
}

async function requestShipments(agent: ReturnType<typeof shipAgent>, count: number): Promise<string[]> {
  const ids: string[] = []
  for (let i = 0; i < count; i++) {
    const result = await runAgent(agent, { input: `item-${i}` }).result
    expect(result.status).toBe('awaiting-approval')
    ids.push(result.approvals[0]!.id)
  }
  return ids
}

/** Per approval: how many deciders completed it, and the codes of the others. */
function tally(results: Array<{ id: string; status: string; code?: string }>) {
  const byId = new Map<string, { completed: number; codes: string[] }>()
  for (const result of results) {
    const entry = byId.get(result.id) ?? { completed: 0, codes: [] }
    if (result.status === 'completed') entry.completed++
    else entry.codes.push(result.code ?? result.status)
    byId.set(result.id, entry)
  }
  return byId
}

describe('an approval is decided once across processes and instances', () => {
  it('two OS processes approving the same approvals over one fs workspace run each approved call once', async () => {
    const dir = tempDir()
    const ids = await requestShipments(shipAgent(dir), 8)
    // Both processes read every approval pending before either decides (the worst interleaving).
    const agent = shipAgent(dir, rendezvousWorkspace(createWorkspace({ dir }), dir, 'parent'))
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, 'resolve', dir, ...ids], { stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stderr.on('data', chunk => { stderr += chunk })
    await new Promise<void>((ready, fail) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString()
        if (stdout.startsWith('ready\n')) ready()
      })
      child.on('exit', code => fail(new Error(`child exited (${code}) before it was ready: ${stderr}`)))
    })
    const exited = new Promise<number | null>(done => child.on('exit', done))
    child.stdin.write('go\n')
    const mine = await Promise.all(ids.map(async id => {
      const result = await resolveApproval(agent, id, { approved: true, approver: 'parent' }).result
      return { id, status: result.status, ...(result.error ? { code: result.error.code } : {}) }
    }))
    expect(await exited).toBe(0)
    const theirs = stdout.split('\n').slice(1).filter(Boolean).map(line => JSON.parse(line) as { id: string; status: string; code?: string })
    expect(theirs).toHaveLength(ids.length)
    const byId = tally([...mine, ...theirs])
    for (const id of ids) expect(byId.get(id)).toEqual({ completed: 1, codes: ['APPROVAL_ALREADY_RESOLVED'] })
    const effects = sideEffects(dir)
    expect(effects.map(line => line.split(' ')[0]).sort()).toEqual(ids.map((_, i) => `item-${i}`).sort())
  }, 60_000)

  const redis = useRedisProbe('vam-race-', 'the Redis approval race')
  it('two workspace instances on one Redis approving the same approvals run each approved call once', async ({ skip }) => {
    if (!redis.probe) skip()
    const base = `vam-race-${process.pid}-${Date.now()}`
    const dir = tempDir()
    const ids = await requestShipments(shipAgent(dir, redisWorkspace(base)), 8)
    // Two instances (two ioredis clients: no lock in common), both reading every approval pending before either decides.
    const one = shipAgent(dir, rendezvousWorkspace(redisWorkspace(base), dir, 'one'))
    const two = shipAgent(dir, rendezvousWorkspace(redisWorkspace(base), dir, 'two'))
    const decide = (agent: ReturnType<typeof shipAgent>, id: string) => resolveApproval(agent, id, { approved: true }).result
      .then(result => ({ id, status: result.status, ...(result.error ? { code: result.error.code } : {}) }))
    const results = await Promise.all(ids.flatMap(id => [decide(one, id), decide(two, id)]))
    const byId = tally(results)
    for (const id of ids) expect(byId.get(id)).toEqual({ completed: 1, codes: ['APPROVAL_ALREADY_RESOLVED'] })
    expect(sideEffects(dir)).toHaveLength(ids.length)
  })
})

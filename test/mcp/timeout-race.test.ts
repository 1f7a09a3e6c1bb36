/**
 * The timeout's side of the timeout-versus-approve race (docs/mcp.md, known limits): a call over
 * MCP times out and, between its last read of the still-pending approval and its claim of the
 * denial (the window `timeoutClaimSeam` holds it in), a real second OS process on the same fs
 * workspace (another app instance: no lock of this process orders the two) decides. The decision
 * claim settles it: the other process's decision stands and the timeout denies nothing.
 */
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, describe, expect, it } from 'vitest'
import { listApprovals, runAgent } from '../../src/index.ts'
import type { AgentRunEvent } from '../../src/index.ts'
import { timeoutClaimSeam } from '../../src/mcp/approvals.ts'
import { fsWorkspace, jsonlLines, providerAgent, scriptedProvider, userStore } from './helpers.ts'

const CHILD = fileURLToPath(new URL('./fixtures/decide-child.ts', import.meta.url))
const run = promisify(execFile)

afterEach(() => { delete timeoutClaimSeam.beforeClaim })

/** Runs one memory_remember over MCP with a 300 ms approval timeout; in the timeout's claim window a second process decides with `verdict`. */
async function raceTheTimeout(verdict: 'approve' | 'deny', reason?: string) {
  const workspace = fsWorkspace()
  const results: unknown[] = []
  const { provider } = scriptedProvider(async (client) => { results.push(await client.callTool({ name: 'memory_remember', arguments: { kind: 'semantic', content: 'raced fact' } })) })
  const agent = providerAgent(userStore('require-approval'), provider, workspace, 300)
  const held: string[] = []
  const decisions: Array<{ status: string; code?: string }> = []
  timeoutClaimSeam.beforeClaim = async (approval) => {
    held.push(approval.status)
    const { stdout } = await run(process.execPath, ['--import', 'tsx', CHILD, workspace.dir, approval.id, verdict, ...(reason ? [reason] : [])])
    decisions.push(JSON.parse(stdout) as { status: string; code?: string })
  }
  const events: AgentRunEvent[] = []
  const waiting = runAgent(agent, { input: 'go', user: { id: 'alice' } })
  for await (const event of waiting) events.push(event)
  return { workspace, agent, result: await waiting.result, results, held, decisions, events }
}

describe('MCP approval timeout against a decision of another app instance', () => {
  it('an approval that another process claims while the timeout holds at its claim runs the call once, and the timeout denies nothing', async () => {
    const { workspace, agent, result, results, held, decisions, events } = await raceTheTimeout('approve')
    expect(held).toEqual(['pending'])
    expect(decisions).toEqual([{ status: 'completed' }])
    expect(result.status).toBe('completed')
    expect(results[0]).toMatchObject({ structuredContent: { action: 'created', store: 'agent' } })
    expect(results[0]).not.toHaveProperty('isError')
    expect(jsonlLines(workspace).map(line => line.content)).toEqual(['raced fact'])
    const [approval] = await listApprovals(agent)
    expect(approval).toMatchObject({ status: 'approved', decision: { approved: true, approver: expect.stringMatching(/^pid \d+$/) } })
    // The waiting run reports the decision it took, an approval; no denial of its own.
    expect(events.filter(event => event.type === 'approval-decision').map(event => (event as { approved: boolean }).approved)).toEqual([true])
  })

  it('a denial that another process claims in that window is the call\'s answer: APPROVAL_DENIED with its reason, not APPROVAL_TIMEOUT', async () => {
    const { workspace, result, results, held } = await raceTheTimeout('deny', 'not now')
    expect(held).toEqual(['pending'])
    expect(result.status).toBe('completed')
    expect(results[0]).toMatchObject({ isError: true, structuredContent: { error: { code: 'APPROVAL_DENIED', details: { reason: 'not now' } } } })
    expect(jsonlLines(workspace)).toEqual([])
  })
})

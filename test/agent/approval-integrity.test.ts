/**
 * Approval files are integrity-checked (docs/security.md): an HMAC-SHA-256 seal with the
 * workspace's own secret, and a decision claim written once. Real files on an fs workspace,
 * edited by hand the way an attacker with write access to the folder would.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { listApprovals, resolveApproval } from '../../src/agent/approvals.ts'
import { runAgent } from '../../src/agent/run.ts'
import { shipAgent, sideEffects } from './fixtures/ship-agent.ts'

const dirs: string[] = []
afterAll(() => dirs.forEach(dir => rmSync(dir, { recursive: true, force: true })))

async function asked(input = 'parcel') {
  const dir = mkdtempSync(join(tmpdir(), 'vam-seal-'))
  dirs.push(dir)
  const agent = shipAgent(dir)
  const approval = (await runAgent(agent, { input }).result).approvals[0]!
  const file = join(dir, 'agents/shipper/approvals', `${approval.id}.json`)
  return { dir, agent, approval, file }
}

const edit = (file: string, change: (value: Record<string, any>) => void) => {
  const value = JSON.parse(readFileSync(file, 'utf8'))
  change(value)
  writeFileSync(file, JSON.stringify(value, null, 2))
}

describe('approval files are integrity-checked', () => {
  it('an approval file with an edited input is refused with APPROVAL_TAMPERED and nothing runs', async () => {
    const { dir, agent, approval, file } = await asked()
    edit(file, value => { value.input = { item: 'something else' } })
    const result = await resolveApproval(agent, approval.id, { approved: true }).result
    expect(result.error).toMatchObject({ code: 'APPROVAL_TAMPERED', details: { approvalId: approval.id } })
    expect(sideEffects(dir)).toEqual([])
  })

  it('a forged approval file (written by hand, no valid seal) is refused and never listed', async () => {
    const { dir, agent, approval, file } = await asked()
    const forged = { ...JSON.parse(readFileSync(file, 'utf8')), id: 'apr_forged', input: { item: 'gold bars' } }
    delete forged.integrity
    writeFileSync(join(dir, 'agents/shipper/approvals/apr_forged.json'), JSON.stringify(forged))
    expect((await resolveApproval(agent, 'apr_forged', { approved: true }).result).error?.code).toBe('APPROVAL_TAMPERED')
    expect((await listApprovals(agent)).map(item => item.id)).toEqual([approval.id])
    expect(sideEffects(dir)).toEqual([])
  })

  it('an approval sealed in another workspace (another secret) is refused there', async () => {
    const one = await asked()
    const two = await asked()
    copyFileSync(one.file, join(two.dir, 'agents/shipper/approvals', `${one.approval.id}.json`))
    expect((await resolveApproval(two.agent, one.approval.id, { approved: true }).result).error?.code).toBe('APPROVAL_TAMPERED')
    expect(sideEffects(two.dir)).toEqual([])
  })

  it('a denied approval flipped back to pending by hand is refused; nothing runs when it is approved', async () => {
    const { dir, agent, approval, file } = await asked()
    expect((await resolveApproval(agent, approval.id, { approved: false, reason: 'no' }).result).status).toBe('completed')
    edit(file, value => { value.status = 'pending'; delete value.decision })
    expect((await resolveApproval(agent, approval.id, { approved: true }).result).error?.code).toBe('APPROVAL_TAMPERED')
    expect(sideEffects(dir)).toEqual([])
  })

  it('the sealed pending copy put back after the decision still reads as decided: APPROVAL_ALREADY_RESOLVED, nothing runs', async () => {
    const { dir, agent, approval, file } = await asked()
    const pendingCopy = readFileSync(file)
    expect((await resolveApproval(agent, approval.id, { approved: false }).result).status).toBe('completed')
    writeFileSync(file, pendingCopy)
    const again = await resolveApproval(agent, approval.id, { approved: true }).result
    expect(again.error).toMatchObject({ code: 'APPROVAL_ALREADY_RESOLVED', details: { status: 'denied' } })
    expect(sideEffects(dir)).toEqual([])
  })

  it('a decision claim written by hand (no valid seal) is refused: the approval cannot be approved through it', async () => {
    const { dir, agent, approval } = await asked()
    writeFileSync(join(dir, 'agents/shipper/approvals', `${approval.id}.decision`), JSON.stringify({ approvalId: approval.id, agent: 'shipper', status: 'approved', decision: { approved: true, decidedAt: new Date().toISOString() } }))
    expect((await resolveApproval(agent, approval.id, { approved: true }).result).error?.code).toBe('APPROVAL_TAMPERED')
    expect(sideEffects(dir)).toEqual([])
  })
})

/**
 * memory_delete of a superseded record (docs/memory.md, "Soft delete"): the seed makes
 * memory_delete a soft delete by id with no condition on status, and memory_read shows superseded
 * records, so their ids can be deleted, under every policy alike.
 */
import { describe, expect, it } from 'vitest'
import { resolveApproval } from '../../src/agent/approvals.ts'
import { defineAgent } from '../../src/agent/define.ts'
import { runAgent } from '../../src/agent/run.ts'
import { memory } from '../../src/memory/capability.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import { collect, memoryWorkspace } from '../agent/helpers.ts'

const SCOPE = { user: 'u1' }
const target = { store: 'agent', scope: SCOPE }

async function setup(policy: 'allow' | 'require-approval') {
  const factory = inMemoryMemoryStore()
  const adapter = await factory.create({ store: 'agent', agent: 'bot', writable: true })
  const old = await adapter.append(target, { kind: 'semantic', content: 'Lives in Oslo' }, { audit: { via: 'api' } })
  await adapter.append(target, { kind: 'semantic', content: 'Lives in Bergen', supersedes: [old.id] }, { audit: { via: 'api' } })
  const model = scriptedModel([{ toolCalls: [{ toolName: 'memory_delete', input: { id: old.id }, toolCallId: 'd1' }] }, { text: 'Done.' }, { toolCalls: [{ toolName: 'memory_delete', input: { id: old.id }, toolCallId: 'd2' }] }, { text: 'Done.' }])
  const agent = defineAgent({ name: 'bot', driver: { model }, workspace: memoryWorkspace(), capabilities: [memory({ stores: { agent: { adapter: factory, scope: SCOPE, write: { mode: 'tool', policy } } } })] })
  return { adapter, agent, old }
}

describe('memory_delete of a superseded record', () => {
  it('with policy allow deletes it; a second delete answers MEMORY_RECORD_NOT_FOUND', async () => {
    const { adapter, agent, old } = await setup('allow')
    const first = await collect(runAgent(agent, { input: 'forget Oslo', threadId: 't1' }))
    expect(first.events.find(event => event.type === 'tool-result')).toMatchObject({ toolName: 'memory_delete' })
    expect((await adapter.export(target)).find(record => record.id === old.id)?.status).toBe('deleted')
    const second = await collect(runAgent(agent, { input: 'forget Oslo again', threadId: 't1' }))
    expect(second.events.find(event => event.type === 'tool-error')).toMatchObject({ error: { code: 'MEMORY_RECORD_NOT_FOUND' } })
  })

  it('with policy require-approval asks for approval (not refused up front) and deletes it once approved', async () => {
    const { adapter, agent, old } = await setup('require-approval')
    const asked = await runAgent(agent, { input: 'forget Oslo', threadId: 't1' }).result
    expect(asked.status).toBe('awaiting-approval')
    expect((await resolveApproval(agent, asked.approvals[0]!.id, { approved: true }).result).status).toBe('completed')
    expect((await adapter.export(target)).find(record => record.id === old.id)?.status).toBe('deleted')
  })
})

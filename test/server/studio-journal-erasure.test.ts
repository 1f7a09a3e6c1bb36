/**
 * An erasure reaches the studio's run journal (`agents:<agent>:studio:threads:<id>.json`), which
 * the agent routes write for every run they start: after `eraseMemoryScope` a byte scan of the
 * workspace finds the erased text in no journal of its owner, while another user's journal with
 * the same sentence and no link to the erased record is kept. Real routes (`app.fetch`), the
 * playground's support agent on an fs workspace.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { defineAgent } from '../../src/agent/define.ts'
import type { CustomRunDriver } from '../../src/agent/types.ts'
import { memory, workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import { openMemoryStore } from '../../src/memory/open-store.ts'
import { eraseMemoryScope } from '../../src/memory/retention.ts'
import { createAgentRoutes } from '../../src/server/routes.ts'
import { discoverScopeUsers } from '../../src/server/studio-routes.ts'
import { devIdentity } from '../../src/vite/plugin.ts'
import { createSupportAgent } from '../../playground/server/lib/support-agent.ts'
import type { AgentSource } from '../../src/server/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { filesHolding } from '../helpers/erased-text.ts'

const SENTENCE = 'my locker code is marmalade 8812'
const folders: string[] = []
afterAll(() => folders.forEach(dir => rmSync(dir, { recursive: true, force: true })))

describe('erasure and the studio journal', () => {
  it('erasing ann\'s scope scrubs the erased text from her studio journals and keeps ben\'s journal of his own identical sentence', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-journal-erase-'))
    folders.push(dir)
    const agent = await createSupportAgent({ workspaceDir: dir, driver: 'scripted' })
    const source: AgentSource = { list: async () => ['support'], load: async name => (name === 'support' ? agent : undefined) }
    const app = createAgentRoutes({ agents: source, identify: devIdentity(['ann', 'ben'], { discover: () => discoverScopeUsers(source) }), mode: 'dev', devUsers: ['ann', 'ben'], studio: true })
    const post = async (path: string, user: string, body: unknown) => {
      const response = await app.fetch(new Request(`http://test/__agents${path}`, { method: 'POST', headers: { 'x-agent-user': user, 'content-type': 'application/json' }, body: JSON.stringify(body) }))
      return (await response.text()).trim().split('\n').map(line => JSON.parse(line) as { type: string, approval?: { id: string } })
    }
    for (const user of ['ann', 'ben']) {
      const asked = await post('/agents/support/runs', user, { input: `remember ${SENTENCE}` })
      const approval = asked.find(event => event.type === 'approval-request')!.approval!
      await post(`/agents/support/approvals/${approval.id}`, user, { approved: true })
    }
    // A second thread of ann's where the search result shows the record.
    await post('/agents/support/runs', 'ann', { input: 'locker code marmalade' })
    const journals = () => filesHolding(dir, SENTENCE).filter(file => file.startsWith('agents/support/studio/'))
    expect(journals()).toHaveLength(3)

    const anns = await openMemoryStore(agent, { user: { id: 'ann' } })
    const report = await eraseMemoryScope(anns.adapter, anns.target, { audit: { via: 'api', user: 'admin' } })

    expect(report.erased).toBe(1)
    const left = journals()
    expect(left).toHaveLength(1)
    expect(JSON.parse((await agent.workspace!.readText(left[0]!.replaceAll('/', ':')))!).user).toBe('ben')
    expect(report.copies.remaining).toEqual([])
    expect(report.copies.scrubbed.filter(copy => copy.key.startsWith('agents:support:studio:threads:'))).toHaveLength(2)
    expect(report.copies.kept).toContain(left[0]!.replaceAll('/', ':'))
  })

  it('a studio run that shows a record and then erases it (memory_delete with retention.hardDelete) does not write the text back into its journal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-journal-erase-'))
    folders.push(dir)
    const driver: CustomRunDriver = {
      async run({ tools, write }) {
        const found = await tools.memory_search!.call({ query: 'locker code' })
        const [shown] = found.status === 'ok' ? (found.output as { results: Array<{ id: string }> }).results : []
        await tools.memory_delete!.call({ id: shown!.id })
        write('Forgotten.')
      },
    }
    const agent = defineAgent({
      name: 'support',
      driver,
      workspace: createWorkspace({ dir }),
      capabilities: [memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined), write: { mode: 'tool', policy: 'allow' }, retention: { hardDelete: true } } } })],
    })
    const anns = await openMemoryStore(agent, { user: { id: 'ann' } })
    await anns.adapter.append(anns.target, { content: SENTENCE, kind: 'semantic' }, { audit: { via: 'api' } })
    const source: AgentSource = { list: async () => ['support'], load: async name => (name === 'support' ? agent : undefined) }
    const app = createAgentRoutes({ agents: source, identify: devIdentity(['ann']), mode: 'dev', devUsers: ['ann'], studio: true })
    const response = await app.fetch(new Request('http://test/__agents/agents/support/runs', { method: 'POST', headers: { 'x-agent-user': 'ann', 'content-type': 'application/json' }, body: JSON.stringify({ input: 'forget my locker code' }) }))
    const events = (await response.text()).trim().split('\n').map(line => JSON.parse(line) as { type: string, status?: string })
    expect(events.at(-1)).toMatchObject({ type: 'finish', status: 'completed' })
    expect(events.filter(event => event.type === 'tool-result')).toHaveLength(2)
    expect(filesHolding(dir, SENTENCE)).toEqual([])
    expect(filesHolding(dir, 'Forgotten.')).toEqual(expect.arrayContaining([expect.stringMatching(/^agents\/support\/studio\/threads\//)]))
  })
})

/**
 * The agent directory's memory folder (slots document, "An agent directory's `memory/` folder is
 * part of the agent"): real files in a temporary project, loaded with the CLI's loader and run
 * with a scripted model.
 */
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { loadAgent } from '../../src/cli/load-agent.ts'
import { defineAgent, runAgent } from '../../src/index.ts'
import { memoryFolder, parseMemoryFile } from '../../src/capabilities/index.ts'
import type { CustomRunContext, ToolCallOutcome } from '../../src/index.ts'
import { scriptedModel } from '../../src/testing/index.ts'

type Prompt = ReturnType<typeof scriptedModel>['prompts'][number]
const systemOf = (prompt: Prompt) => prompt.filter(m => m.role === 'system').map(m => m.content).join('\n')

// The agent module: a custom-run driver that calls the tools it is given and reports them through the global.
const AGENT_MODULE = `export default { kind: 'agent', name: 'agent', instructions: '', capabilities: [], tools: {}, driver: { async run(ctx) { await globalThis.__folderProbe(ctx) } } }\n`

function project(memoryFiles: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'vam-folder-'))
  mkdirSync(join(root, 'server/agents/support/memory'), { recursive: true })
  writeFileSync(join(root, 'server/agents/support/agent.ts'), AGENT_MODULE)
  for (const [file, text] of Object.entries(memoryFiles)) writeFileSync(join(root, 'server/agents/support/memory', file), text)
  return root
}

async function probe(root: string, calls: Array<[string, Record<string, unknown>]>) {
  const seen: { tools: string[]; outcomes: ToolCallOutcome[] } = { tools: [], outcomes: [] }
  ;(globalThis as { __folderProbe?: unknown }).__folderProbe = async (ctx: CustomRunContext) => {
    seen.tools = Object.keys(ctx.tools).sort()
    for (const [name, input] of calls) seen.outcomes.push(await ctx.tools[name]!.call(input))
    ctx.write('ok')
  }
  const { agent } = await loadAgent(root, 'support')
  await runAgent(agent, { input: 'go' }).result
  return seen
}

const items = (outcome: ToolCallOutcome | undefined) => (outcome?.status === 'ok' ? (outcome.output as { items: Array<{ text: string }> }).items.map(i => i.text) : outcome)

describe('the agent directory\'s memory folder', () => {
  it('Markdown list items, paragraphs, JSON arrays and JSONL lines are the items of a file', () => {
    expect(parseMemoryFile('a.md', '# Policies\n\n- Refunds within 30 days.\n- Shipping is free\n  over 50 EUR.\n')).toEqual([
      { kind: 'semantic', content: 'Refunds within 30 days.' }, { kind: 'semantic', content: 'Shipping is free over 50 EUR.' },
    ])
    expect(parseMemoryFile('b.md', '# Tone\n\nBe brief.\n\nNever promise dates.\n').map(i => i.content)).toEqual(['Be brief.', 'Never promise dates.'])
    expect(parseMemoryFile('c.json', '["One.", { "text": "Two.", "tags": ["x"], "kind": "procedural" }]')).toEqual([
      { kind: 'semantic', content: 'One.' }, { kind: 'procedural', content: 'Two.', tags: ['x'] },
    ])
    expect(parseMemoryFile('d.jsonl', '"One."\n\n{"content":"Two."}\n').map(i => i.content)).toEqual(['One.', 'Two.'])
    expect(() => parseMemoryFile('e.json', '{"text":"x"}')).toThrow(expect.objectContaining({ code: 'AGENT_MEMORY_FILE_INVALID' }))
    expect(() => parseMemoryFile('f.jsonl', '"ok"\nnot json\n')).toThrow(/line 2 is not valid JSON/)
  })

  it('each file is a read-only store named after it: recall_<file> finds its items, and no tool writes them', async () => {
    const root = project({ 'policies.md': '- Refunds within 30 days.\n- Shipping is free over 50 EUR.\n', 'faq.json': '["Support answers within one day."]', 'notes.txt': 'ignored' })
    const seen = await probe(root, [['recall_policies', { query: 'refund' }], ['recall_faq', {}]])
    expect(seen.tools).toEqual(['recall_faq', 'recall_policies'])
    expect(items(seen.outcomes[0])).toEqual(['Refunds within 30 days.'])
    expect(items(seen.outcomes[1])).toEqual(['Support answers within one day.'])
  })

  it('the items are pinned records recalled into the system prompt at the first model call, in file order', async () => {
    const model = scriptedModel([{ text: 'ok' }])
    const agent = defineAgent({ name: 'support', driver: { model }, capabilities: [memoryFolder({ 'policies.md': '- Refunds within 30 days.\n- Shipping is free over 50 EUR.\n' })] })
    await runAgent(agent, { input: 'hi' }).result
    expect(systemOf(model.prompts[0]!)).toContain('<memory name="policies">\n- Refunds within 30 days.\n- Shipping is free over 50 EUR.\n</memory>')
  })

  it('an edited file is read again at the next run without a restart', async () => {
    const root = project({ 'policies.md': '- Refunds within 30 days.\n' })
    expect(items((await probe(root, [['recall_policies', {}]])).outcomes[0])).toEqual(['Refunds within 30 days.'])
    const file = join(root, 'server/agents/support/memory/policies.md')
    writeFileSync(file, '- Refunds within 14 days.\n')
    utimesSync(file, new Date(), new Date(Date.now() + 5000))
    expect(items((await probe(root, [['recall_policies', {}]])).outcomes[0])).toEqual(['Refunds within 14 days.'])
  })

  it('a file named unlike a store, or that does not parse, fails the run with AGENT_MEMORY_FILE_INVALID naming it', async () => {
    const agent = defineAgent({ name: 'support', driver: { run: (ctx) => ctx.write('x') }, capabilities: [memoryFolder({ 'bad name.md': '- x' })] })
    expect(await runAgent(agent, { input: 'hi' }).result).toMatchObject({ status: 'failed', error: { code: 'AGENT_MEMORY_FILE_INVALID' } })
    const broken = defineAgent({ name: 'support', driver: { run: (ctx) => ctx.write('x') }, capabilities: [memoryFolder({ 'faq.json': '{' })] })
    expect(await runAgent(broken, { input: 'hi' }).result).toMatchObject({ status: 'failed', error: { code: 'AGENT_MEMORY_FILE_INVALID', message: expect.stringContaining('faq.json') } })
  })
})

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { defineAgent } from '../../src/agent/define.ts'
import { runAgent } from '../../src/agent/run.ts'
import type { AgentDefinition, AgentDriver } from '../../src/agent/types.ts'
import { history, openHistory, workspaceHistoryStore } from '../../src/capabilities/index.ts'
import type { HistoryOptions } from '../../src/capabilities/index.ts'
import { historyKey } from '../../src/history/store.ts'
import { scriptedModel, type ScriptedModel } from '../../src/testing/index.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

type Prompt = ScriptedModel['prompts'][number]

const folders: string[] = []
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

function workspace() {
  const dir = mkdtempSync(join(tmpdir(), 'vam-history-'))
  folders.push(dir)
  return createWorkspace({ dir })
}

function agent(driver: AgentDriver, options: HistoryOptions = {}, ws = workspace()): AgentDefinition {
  return defineAgent({ name: 'support', driver, workspace: ws, capabilities: [history(options)] })
}

/** The text of every message of a prompt, by role (system text included). */
function said(prompt: Prompt): string[] {
  return prompt.map(message => `${message.role}: ${typeof message.content === 'string' ? message.content : message.content.map(part => ('text' in part ? part.text : '')).join('')}`)
}

/** Text of the whole prompt of a summary call. */
function promptText(prompt: Prompt): string {
  return said(prompt).join('\n')
}

/** A scripted model whose calls wait until `release()` (to interleave writes with a summary call). */
function gatedModel(steps: Parameters<typeof scriptedModel>[0]) {
  const model = scriptedModel(steps)
  const original = model.doStream.bind(model)
  let release!: () => void
  let entered!: () => void
  const gate = new Promise<void>((resolve) => { release = resolve })
  const started = new Promise<void>((resolve) => { entered = resolve })
  model.doStream = async (options) => {
    const result = original(options)
    entered()
    await gate
    return result
  }
  return { model, release, started }
}

async function filled(options: HistoryOptions, count: number, model: ScriptedModel) {
  const definition = agent({ model }, options)
  const conversation = await openHistory(definition, { threadId: 'thread_1' })
  const added = await conversation.add(...Array.from({ length: count }, (_, index) => ({ role: index % 2 ? 'assistant' as const : 'user' as const, content: `message ${index}` })))
  return { definition, conversation, added }
}

describe('history() stores and injects the conversation', () => {
  it('after each response the turn is stored, and the next model call sees it before the new input', async () => {
    const model = scriptedModel([{ text: 'Hello Alice' }, { text: 'You work at Acme' }])
    const definition = agent({ model })
    await runAgent(definition, { input: 'My name is Alice, I work at Acme', threadId: 't1' }).result
    const result = await runAgent(definition, { input: 'Where do I work?', threadId: 't1' }).result
    expect(result.status).toBe('completed')
    expect(said(model.prompts[1]!).filter(line => !line.startsWith('system'))).toEqual([
      'user: My name is Alice, I work at Acme',
      'assistant: Hello Alice',
      'user: Where do I work?',
    ])
    const entries = await (await openHistory(definition, { threadId: 't1' })).list()
    expect(entries.map(entry => [entry.role, entry.content])).toEqual([
      ['user', 'My name is Alice, I work at Acme'],
      ['assistant', 'Hello Alice'],
      ['user', 'Where do I work?'],
      ['assistant', 'You work at Acme'],
    ])
    expect(entries.every(entry => /^hist_[0-9a-f]{32}$/.test(entry.id) && entry.runId?.startsWith('run_'))).toBe(true)
  })

  it('scope "user" carries one user\'s history across threads and never to another user', async () => {
    const model = scriptedModel([{ text: 'Noted' }, { text: 'Acme' }, { text: 'No idea' }])
    const definition = agent({ model }, { scope: 'user' })
    await runAgent(definition, { input: 'I work at Acme', threadId: 'a1', user: { id: 'alice' } }).result
    await runAgent(definition, { input: 'Where do I work?', threadId: 'a2', user: { id: 'alice' } }).result
    await runAgent(definition, { input: 'Where do I work?', threadId: 'b1', user: { id: 'bob' } }).result
    const spoken = (prompt: Prompt) => said(prompt).filter(line => !line.startsWith('system'))
    expect(spoken(model.prompts[1]!)).toEqual(['user: I work at Acme', 'assistant: Noted', 'user: Where do I work?'])
    expect(spoken(model.prompts[2]!)).toEqual(['user: Where do I work?'])
  })

  it('scope "user" keeps one history per identity: the same user id in two tenants has two histories', async () => {
    const model = scriptedModel([{ text: 'Noted' }, { text: 'Acme' }, { text: 'No idea' }, { text: 'Hello' }])
    const definition = agent({ model }, { scope: 'user' })
    await runAgent(definition, { input: 'I work at Acme', threadId: 'a1', user: { id: 'alice', tenant: 'north' } }).result
    await runAgent(definition, { input: 'Where do I work?', threadId: 'a2', user: { id: 'alice', tenant: 'north' } }).result
    await runAgent(definition, { input: 'Where do I work?', threadId: 's1', user: { id: 'alice', tenant: 'south' } }).result
    await runAgent(definition, { input: 'Hi', threadId: 'n1', user: { id: 'alice' } }).result
    const spoken = (prompt: Prompt) => said(prompt).filter(line => !line.startsWith('system'))
    expect(spoken(model.prompts[1]!)).toEqual(['user: I work at Acme', 'assistant: Noted', 'user: Where do I work?'])
    expect(spoken(model.prompts[2]!)).toEqual(['user: Where do I work?'])
    expect(spoken(model.prompts[3]!)).toEqual(['user: Hi'])
    const north = await openHistory(definition, { user: { id: 'alice', tenant: 'north' } })
    expect(north.scope).toEqual({ agent: 'support', tenant: 'north', user: 'alice' })
    expect((await openHistory(definition, { user: { id: 'alice' } })).scope).toEqual({ agent: 'support', user: 'alice' })
  })

  it('scope "user" without a user switches history off for the run (nothing stored)', async () => {
    const ws = workspace()
    const definition = agent({ model: scriptedModel([{ text: 'hi' }]) }, { scope: 'user', store: workspaceHistoryStore() }, ws)
    expect((await runAgent(definition, { input: 'anonymous', threadId: 't' }).result).status).toBe('completed')
    expect(await ws.keys('history')).toEqual([])
  })

  it('with workspaceHistoryStore() the history value is JSONL under history/ with a key that hides raw ids and keeps case-different users apart', async () => {
    const lower = await historyKey({ agent: 'support', user: 'alice' })
    const upper = await historyKey({ agent: 'support', user: 'Alice' })
    expect(lower).toMatch(/^history:agent-support_user-alice-[0-9a-f]{24}\.jsonl$/)
    expect(lower.toLowerCase()).not.toBe(upper.toLowerCase())
    expect(await historyKey({ agent: 'support', user: 'a:b/../c' })).toMatch(/^history:agent-support_user-a-b-c-[0-9a-f]{24}\.jsonl$/)
    const ws = workspace()
    await runAgent(agent({ model: scriptedModel([{ text: 'ok' }]) }, { store: workspaceHistoryStore() }, ws), { input: 'x', threadId: 't' }).result
    const [file] = readdirSync(join(ws.dir!, 'history'))
    const lines = readFileSync(join(ws.dir!, 'history', file!), 'utf8').trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
    expect(lines).toEqual([expect.objectContaining({ v: 1, type: 'add', entries: [expect.objectContaining({ role: 'user', content: 'x' }), expect.objectContaining({ role: 'assistant', content: 'ok' })] })])
  })

  it('an unknown option key or a maxMessages without a middle is an error', () => {
    expect(() => history({ maxMesages: 3 } as never)).toThrow(expect.objectContaining({ code: 'HISTORY_OPTIONS_INVALID' }))
    expect(() => history({ summarizer: { modle: 'x' } } as never)).toThrow(expect.objectContaining({ code: 'HISTORY_OPTIONS_INVALID' }))
    expect(() => history({ maxMessages: 7 })).toThrow(expect.objectContaining({ code: 'HISTORY_OPTIONS_INVALID', why: expect.stringContaining('pinCount + recentCount') }))
    expect(() => history({ scope: {} })).toThrow(expect.objectContaining({ code: 'MEMORY_SCOPE_REQUIRED' }))
  })

  it('a custom-run driver needs a summarizer model only once a summary is due, and the error then says so', async () => {
    const driver = { run: (context: { write(text: string): void }) => context.write('done') }
    const errors: unknown[] = []
    const withoutModel = agent(driver, { maxMessages: 3, pinCount: 1, recentCount: 1, summarizer: { onError: (error) => errors.push(error) } })
    expect((await runAgent(withoutModel, { input: 'hi', threadId: 't' }).result).status).toBe('completed')
    expect(errors).toEqual([])
    expect((await runAgent(withoutModel, { input: 'again', threadId: 't' }).result).status).toBe('completed')
    expect(errors).toEqual([expect.objectContaining({ code: 'HISTORY_SUMMARIZER_MODEL_REQUIRED', why: expect.stringContaining('a summary is due (the history holds 4 entries, more than maxMessages 3)') })])
    expect(await (await openHistory(withoutModel, { threadId: 't' })).list()).toHaveLength(4)
    const seen: number[] = []
    const withModel = agent({ run: (context) => { seen.push(context.messages.length); context.write('done') } }, { summarizer: { model: scriptedModel([]) } })
    await runAgent(withModel, { input: 'first', threadId: 't' }).result
    expect((await runAgent(withModel, { input: 'second', threadId: 't' }).result).status).toBe('completed')
    expect(seen).toEqual([0, 2])
  })
})

describe('history() summarization', () => {
  const limits = { maxMessages: 10, pinCount: 2, recentCount: 5 }

  it('over maxMessages, the first pinCount and last recentCount entries stay and one summary covers the middle', async () => {
    const summarizer = scriptedModel([{ text: 'SUMMARY OF 2-5' }])
    const { conversation, added } = await filled({ ...limits, summarizer: { model: summarizer } }, 11, scriptedModel([]))
    const result = await conversation.summarize()
    expect(result.summaries).toHaveLength(1)
    const window = await conversation.list()
    expect(window.map(entry => entry.content)).toEqual(['message 0', 'message 1', 'SUMMARY OF 2-5', 'message 6', 'message 7', 'message 8', 'message 9', 'message 10'])
    expect(window[2]).toMatchObject({ role: 'summary', covers: added.slice(2, 6).map(entry => entry.id), stale: false })
    const text = promptText(summarizer.prompts[0]!)
    for (let index = 2; index <= 5; index++) expect(text).toContain(`message ${index}`)
    for (const index of [0, 1, 6, 10]) expect(text).not.toContain(`message ${index}\n`)
    expect((await conversation.list({ covered: true })).filter(entry => entry.status === 'covered').map(entry => entry.id)).toEqual(added.slice(2, 6).map(entry => entry.id))
    const context = await conversation.context()
    expect(context.summary).toContain('SUMMARY OF 2-5')
    expect(context.messages).toHaveLength(7)
  })

  it('a later summary takes over the earlier one and covers every original entry', async () => {
    const summarizer = scriptedModel([{ text: 'FIRST' }, { text: 'SECOND' }])
    const { conversation, added } = await filled({ ...limits, summarizer: { model: summarizer } }, 11, scriptedModel([]))
    await conversation.summarize()
    const more = await conversation.add(...Array.from({ length: 3 }, (_, index) => ({ role: 'user' as const, content: `later ${index}` })))
    await conversation.summarize()
    expect(promptText(summarizer.prompts[1]!)).toContain('Summary of the conversation before: FIRST')
    const window = await conversation.list()
    expect(window.map(entry => entry.content)).toEqual(['message 0', 'message 1', 'SECOND', 'message 9', 'message 10', 'later 0', 'later 1', 'later 2'])
    expect(window[2]!.covers).toEqual([...added.slice(2, 9).map(entry => entry.id)])
    expect(more).toHaveLength(3)
  })

  it('the agent summarizes after a response with its own model, and the next call sees pins, summary and recent entries', async () => {
    const steps = [
      ...Array.from({ length: 5 }, (_, index) => ({ text: `answer ${index}` })),
      { text: 'AGENT SUMMARY' },
      { text: 'final answer' },
    ]
    const model = scriptedModel(steps)
    const definition = agent({ model }, { maxMessages: 8, pinCount: 1, recentCount: 2 })
    for (let index = 0; index < 5; index++) await runAgent(definition, { input: `question ${index}`, threadId: 't' }).result
    // 10 entries > 8: the sixth model call was the summary of entries 2..8.
    expect(promptText(model.prompts[5]!)).toContain('assistant: answer 0')
    await runAgent(definition, { input: 'question 5', threadId: 't' }).result
    const last = model.prompts[6]!
    expect(said(last).filter(line => line.startsWith('system'))[0]).toContain('AGENT SUMMARY')
    expect(said(last).filter(line => !line.startsWith('system'))).toEqual(['user: question 0', 'user: question 4', 'assistant: answer 4', 'user: question 5'])
  })

  it('a failed summary does not fail the run and keeps every entry', async () => {
    const errors: unknown[] = []
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }, { error: 'provider down' }])
    const definition = agent({ model }, { maxMessages: 3, pinCount: 1, recentCount: 1, summarizer: { onError: error => errors.push(error) } })
    await runAgent(definition, { input: 'one', threadId: 't' }).result
    const result = await runAgent(definition, { input: 'two', threadId: 't' }).result
    expect(result.status).toBe('completed')
    expect(errors).toEqual([expect.objectContaining({ code: 'HISTORY_SUMMARY_FAILED' })])
    expect((await (await openHistory(definition, { threadId: 't' })).list()).map(entry => entry.content)).toEqual(['one', 'a', 'two', 'b'])
  })
})

describe('history() entries: update, delete, clear, stale summaries', () => {
  const limits = { maxMessages: 10, pinCount: 2, recentCount: 5 }

  it('a deleted message\'s text is absent from the window at once and from every later summary', async () => {
    const summarizer = scriptedModel([
      { text: 'Alice told her PIN 4242 and likes tea' },
      prompt => ({ text: promptText(prompt).includes('4242') ? 'LEAK 4242' : 'Alice likes tea' }),
      prompt => ({ text: promptText(prompt).includes('4242') ? 'LEAK 4242' : 'Alice likes tea; more' }),
    ])
    const definition = agent({ model: scriptedModel([]) }, { ...limits, summarizer: { model: summarizer } })
    const conversation = await openHistory(definition, { threadId: 't' })
    const added = await conversation.add(
      { role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'my PIN is 4242' }, { role: 'assistant', content: 'noted' },
      { role: 'user', content: 'I like tea' }, { role: 'assistant', content: 'ok' },
      ...Array.from({ length: 5 }, (_, index) => ({ role: 'user' as const, content: `recent ${index}` })),
    )
    await conversation.summarize()
    const deleted = await conversation.delete(added[2]!.id)
    expect(deleted?.content).toBe('my PIN is 4242')
    // The summary holds the deleted text: it is stale and out of the model's window until rewritten.
    expect((await conversation.list()).find(entry => entry.role === 'summary')).toMatchObject({ stale: true })
    const context = await conversation.context()
    expect(context.summary).toBeUndefined()
    expect(JSON.stringify(context)).not.toContain('4242')
    const rewrite = await conversation.summarize()
    expect(rewrite.summaries.map(entry => entry.content)).toEqual(['Alice likes tea'])
    expect(promptText(summarizer.prompts[1]!)).not.toContain('4242')
    expect(rewrite.summaries[0]!.covers).toEqual([added[3]!.id, added[4]!.id, added[5]!.id])
    // A later compression of the rewritten summary never brings the text back.
    await conversation.add(...Array.from({ length: 4 }, (_, index) => ({ role: 'assistant' as const, content: `later ${index}` })))
    await conversation.summarize()
    expect(promptText(summarizer.prompts[2]!)).not.toContain('4242')
    const summaries = (await conversation.list({ covered: true })).filter(entry => entry.role === 'summary')
    expect(summaries.map(entry => entry.content)).toEqual(['Alice likes tea; more'])
  })

  it('updating a covered entry makes its summary stale; deleting every covered entry drops the summary', async () => {
    const summarizer = scriptedModel([{ text: 'S1' }, { text: 'S2' }])
    const { conversation, added } = await filled({ ...limits, summarizer: { model: summarizer } }, 11, scriptedModel([]))
    await conversation.summarize()
    expect((await conversation.update(added[3]!.id, 'message 3, corrected'))?.version).toBe(2)
    expect((await conversation.list({ covered: true })).find(entry => entry.role === 'summary')?.stale).toBe(true)
    await conversation.summarize()
    expect(promptText(summarizer.prompts[1]!)).toContain('message 3, corrected')
    for (const entry of added.slice(2, 6)) await conversation.delete(entry.id)
    await conversation.summarize()
    expect((await conversation.list({ covered: true })).filter(entry => entry.role === 'summary')).toEqual([])
    expect(summarizer.prompts).toHaveLength(2)
  })

  it('update and delete of an unknown id answer undefined; clear removes everything and reports the count', async () => {
    const { conversation } = await filled({}, 3, scriptedModel([]))
    expect(await conversation.update('hist_nope', 'x')).toBeUndefined()
    expect(await conversation.delete('hist_nope')).toBeUndefined()
    expect(await conversation.clear()).toBe(3)
    expect(await conversation.list()).toEqual([])
    expect(await conversation.clear()).toBe(0)
  })
})

describe('history() summarization under concurrency', () => {
  const limits = { maxMessages: 10, pinCount: 2, recentCount: 5 }

  it('entries added while a summary is being computed all survive, after the summary', async () => {
    const { model, release, started } = gatedModel([{ text: 'MIDDLE SUMMARY' }])
    const { conversation, added } = await filled({ ...limits, summarizer: { model } }, 11, scriptedModel([]))
    const summarizing = conversation.summarize()
    await started
    // Two more keep the window at maxMessages after the summary, so one summary is enough.
    const during = await Promise.all(Array.from({ length: 2 }, (_, index) => conversation.add({ role: 'user', content: `during ${index}` })))
    release()
    expect((await summarizing).summaries).toHaveLength(1)
    const window = await conversation.list()
    expect(window.map(entry => entry.content)).toEqual(['message 0', 'message 1', 'MIDDLE SUMMARY', 'message 6', 'message 7', 'message 8', 'message 9', 'message 10', 'during 0', 'during 1'])
    expect(window.map(entry => entry.id).slice(-2)).toEqual(during.map(([entry]) => entry!.id))
    expect(window[2]!.covers).toEqual(added.slice(2, 6).map(entry => entry.id))
  })

  it('a middle entry deleted while its summary is computed is not in the summary that is written', async () => {
    const summarizer = gatedModel([
      prompt => ({ text: `covers: ${promptText(prompt).includes('message 3') ? 'with 3' : 'without 3'}` }),
      prompt => ({ text: `covers: ${promptText(prompt).includes('message 3') ? 'with 3' : 'without 3'}` }),
    ])
    // 12 entries: still more than maxMessages after the delete, so the summary is computed again.
    const { conversation, added } = await filled({ ...limits, summarizer: { model: summarizer.model } }, 12, scriptedModel([]))
    const summarizing = conversation.summarize()
    await summarizer.started
    await conversation.delete(added[3]!.id)
    summarizer.release()
    const result = await summarizing
    expect(result.discarded).toBe(1)
    expect(result.summaries.map(entry => entry.content)).toEqual(['covers: without 3'])
    expect(result.summaries[0]!.covers).not.toContain(added[3]!.id)
  })

  it('runs on one thread stay complete while summaries run after each of them', async () => {
    const model = scriptedModel(Array.from({ length: 40 }, (_, index) => ({ text: `reply ${index}` })))
    const definition = agent({ model }, { maxMessages: 6, pinCount: 1, recentCount: 2 })
    for (let index = 0; index < 8; index++) expect((await runAgent(definition, { input: `q${index}`, threadId: 't' }).result).status).toBe('completed')
    const all = await (await openHistory(definition, { threadId: 't' })).list({ covered: true })
    const messages = all.filter(entry => entry.role !== 'summary')
    expect(messages.filter(entry => entry.role === 'user').map(entry => entry.content)).toEqual(Array.from({ length: 8 }, (_, index) => `q${index}`))
    expect(all.filter(entry => entry.role === 'summary' && entry.status === 'active')).toHaveLength(1)
    expect((await (await openHistory(definition, { threadId: 't' })).list()).length).toBeLessThanOrEqual(6)
  })
})

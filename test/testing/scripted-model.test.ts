import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { streamText, tool, jsonSchema } from 'ai'
import { afterEach, describe, expect, it } from 'vitest'
import { scriptedModel } from '../../src/testing/index.ts'
import { tempDir } from '../agent/helpers.ts'

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!()
})

async function play(model: ReturnType<typeof scriptedModel>, prompt: string) {
  const result = streamText({
    model,
    prompt,
    onError: () => {},
    tools: { lookup: tool({ description: 'Look up', inputSchema: jsonSchema<{ q: string }>({ type: 'object', properties: { q: { type: 'string' } } }) }) },
  })
  const parts: Array<Record<string, unknown>> = []
  for await (const part of result.fullStream) parts.push(part as Record<string, unknown>)
  return parts
}

describe('scriptedModel', () => {
  it('each model call plays the next scripted step: text then tool calls, with finish reasons and usage', async () => {
    const model = scriptedModel([{ text: 'Looking.', toolCalls: [{ toolName: 'lookup', input: { q: 'x' } }] }, { text: 'Found.' }])
    const first = await play(model, 'find x')
    expect(first.filter((part) => part.type === 'text-delta').map((part) => part.text)).toEqual(['Looking.'])
    expect(first.find((part) => part.type === 'tool-call')).toMatchObject({ toolCallId: 'call_0_0', toolName: 'lookup', input: { q: 'x' } })
    expect(first.find((part) => part.type === 'finish-step')).toMatchObject({ finishReason: 'tool-calls', usage: { inputTokens: 10, outputTokens: 18 } })
    const second = await play(model, 'again')
    expect(second.find((part) => part.type === 'finish-step')).toMatchObject({ finishReason: 'stop' })
  })

  it('exposes the prompts the model received, in order', async () => {
    const model = scriptedModel([{ text: 'a' }, { text: 'b' }])
    await play(model, 'first question')
    await play(model, 'second question')
    expect(model.prompts.map((prompt) => prompt.map((message) => message.role))).toEqual([['user'], ['user']])
    expect(JSON.stringify(model.prompts[1])).toContain('second question')
    expect(model.calls[0]!.tools?.map((entry) => entry.name)).toEqual(['lookup'])
  })

  it('a step can be a function of the prompt', async () => {
    const model = scriptedModel([(prompt) => ({ text: `you said ${JSON.stringify(prompt.at(-1)?.content).includes('ping') ? 'ping' : 'other'}` })])
    const parts = await play(model, 'ping')
    expect(parts.find((part) => part.type === 'text-delta')?.text).toBe('you said ping')
  })

  it('a call past the last step fails with SCRIPTED_MODEL_EXHAUSTED', async () => {
    const model = scriptedModel([])
    const parts = await play(model, 'x')
    expect(String((parts.find((part) => part.type === 'error')?.error as Error).message)).toContain('SCRIPTED_MODEL_EXHAUSTED')
  })

  it('the testing entry loads in plain Node without importing vitest', async () => {
    const { dir, cleanup } = await tempDir()
    cleanups.push(cleanup)
    const hook = join(dir, 'hook.mjs')
    const register = join(dir, 'register.mjs')
    const main = join(dir, 'main.mjs')
    await writeFile(hook, `export async function resolve(specifier, context, next) { if (/(^|\\/)vitest/.test(specifier)) throw new Error('vitest imported: ' + specifier); return next(specifier, context) }\n`)
    await writeFile(register, `import { register } from 'node:module'\nregister(${JSON.stringify(`file://${hook}`)})\n`)
    await writeFile(main, `const { scriptedModel } = await import(${JSON.stringify(join(process.cwd(), 'src/testing/index.ts'))})\nconsole.log(typeof scriptedModel([{ text: 'x' }]).doStream)\n`)
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', '--import', register, main], { cwd: process.cwd() })
    expect(stdout.trim()).toBe('function')
  })
})

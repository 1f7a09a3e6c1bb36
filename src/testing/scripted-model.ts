import type { LanguageModelV3CallOptions, LanguageModelV3Prompt, LanguageModelV3StreamPart } from '@ai-sdk/provider'
import { MockLanguageModelV3 } from 'ai/test'
import { agentError } from '../errors.ts'

/** One tool call a scripted step makes. `toolCallId` defaults to `call_<step>_<index>`. */
export interface ScriptedToolCall {
  toolName: string
  /** Tool input; serialized with `JSON.stringify` unless it is already a string (to script broken JSON). */
  input: unknown
  toolCallId?: string
}

/** What the model answers in one `doStream` call. */
export interface ScriptedStep {
  text?: string
  toolCalls?: ScriptedToolCall[]
  /** Fail this call with this message instead of answering (to test model errors). */
  error?: string
}

/** A step, or a function of the prompt the model receives that returns one. */
export type ScriptedStepInput = ScriptedStep | ((prompt: LanguageModelV3Prompt) => ScriptedStep)

/** A {@link MockLanguageModelV3} that plays scripted steps, plus what it was asked. */
export interface ScriptedModel extends MockLanguageModelV3 {
  /** The prompt of each model call so far, in order (what the model saw). */
  readonly prompts: LanguageModelV3Prompt[]
  /** Full call options of each model call (tools, tool choice, ...). */
  readonly calls: LanguageModelV3CallOptions[]
}

/**
 * A deterministic AI SDK `LanguageModel` for tests and demos: the n-th `doStream` call plays the
 * n-th step (text, then tool calls). Finish reason `'tool-calls'` when the step has tool calls,
 * else `'stop'`; usage is filled with small fixed numbers. A call past the last step fails with
 * `SCRIPTED_MODEL_EXHAUSTED`. Uses `ai/test` only (no test framework), so package users can use it.
 */
export function scriptedModel(steps: ScriptedStepInput[]): ScriptedModel {
  const model = new MockLanguageModelV3({
    provider: 'scripted',
    modelId: 'scripted-model',
    doStream: async (options) => {
      const index = model.doStreamCalls.length - 1
      const entry = steps[index]
      if (!entry) throw agentError('SCRIPTED_MODEL_EXHAUSTED', `the scripted model was called ${index + 1} times but has ${steps.length} steps`, 'add a step for every model call the test expects')
      const step = typeof entry === 'function' ? entry(options.prompt) : entry
      if (step.error) throw new Error(step.error)
      return { stream: streamOf(stepParts(step, index)) }
    },
  }) as ScriptedModel
  Object.defineProperties(model, {
    prompts: { get: () => model.doStreamCalls.map((call) => call.prompt) },
    calls: { get: () => [...model.doStreamCalls] },
  })
  return model
}

function stepParts(step: ScriptedStep, index: number): LanguageModelV3StreamPart[] {
  const parts: LanguageModelV3StreamPart[] = [{ type: 'stream-start', warnings: [] }]
  if (step.text) {
    const id = `text_${index}`
    parts.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: step.text }, { type: 'text-end', id })
  }
  const calls = step.toolCalls ?? []
  calls.forEach((call, callIndex) => {
    parts.push({
      type: 'tool-call',
      toolCallId: call.toolCallId ?? `call_${index}_${callIndex}`,
      toolName: call.toolName,
      input: typeof call.input === 'string' ? call.input : JSON.stringify(call.input ?? {}),
    })
  })
  const outputTokens = (step.text?.length ?? 0) + calls.length * 10
  parts.push({
    type: 'finish',
    finishReason: { unified: calls.length ? 'tool-calls' : 'stop', raw: calls.length ? 'tool_calls' : 'stop' },
    usage: {
      inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
    },
  })
  return parts
}

function streamOf<T>(parts: T[]): ReadableStream<T> {
  return new ReadableStream<T>({
    start(controller) {
      for (const part of parts) controller.enqueue(part)
      controller.close()
    },
  })
}

/**
 * Shared harness of the fault-class tests: real workspaces (unstorage fs driver in temp folders),
 * the real host (defineAgent, runAgent, resolveApproval), the scripted AI SDK model.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createWorkspace, defineAgent } from '../../src/index.ts'
import type { AgentDefinition, AgentRun, AgentRunEvent, AgentRunResult } from '../../src/index.ts'
import { memory, workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import type { MemoryOptions } from '../../src/capabilities/index.ts'
import { scriptedModel } from '../../src/testing/index.ts'
import type { ScriptedModel } from '../../src/testing/index.ts'
import type { Workspace } from '../../src/workspace/types.ts'

export type FsWorkspace = Workspace & { dir: string }

export function tempDir(prefix = 'vam-fault-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

export function fsWorkspace(dir = tempDir()): FsWorkspace {
  return createWorkspace({ dir }) as FsWorkspace
}

export function logFile(dir: string, path = 'memory/memory.jsonl'): string {
  return join(dir, path)
}

export function logText(dir: string, path = 'memory/memory.jsonl'): string {
  const file = logFile(dir, path)
  return existsSync(file) ? readFileSync(file, 'utf8') : ''
}

export function logLines(dir: string, path = 'memory/memory.jsonl'): Array<Record<string, any>> {
  return logText(dir, path).split('\n').filter(Boolean).map((line) => JSON.parse(line))
}

export function tornFiles(dir: string): string[] {
  const folder = join(dir, 'memory')
  return existsSync(folder) ? readdirSync(folder).filter((name) => name.includes('.torn-')) : []
}

export async function finish(run: AgentRun): Promise<{ events: AgentRunEvent[]; result: AgentRunResult }> {
  const events: AgentRunEvent[] = []
  for await (const event of run) events.push(event)
  return { events, result: await run.result }
}

export function ofType<T extends AgentRunEvent['type']>(events: AgentRunEvent[], type: T): Array<Extract<AgentRunEvent, { type: T }>> {
  return events.filter((event): event is Extract<AgentRunEvent, { type: T }> => event.type === type)
}

/** The per-user JSONL store of the documented example; `undefined` user switches it off. */
export function userStore(policy: 'allow' | 'require-approval' | 'deny' = 'allow', extra: Partial<MemoryOptions['stores'][string]> = {}): MemoryOptions['stores'][string] {
  return {
    adapter: workspaceJsonlMemoryStore(),
    scope: ({ user }) => (user ? { agent: 'support', user: user.id } : undefined),
    write: { mode: 'tool', policy },
    ...extra,
  }
}

export function modelAgent(workspace: Workspace, steps: Parameters<typeof scriptedModel>[0], stores: MemoryOptions['stores'] = { agent: userStore() }): { agent: AgentDefinition; model: ScriptedModel } {
  const model = scriptedModel(steps)
  const agent = defineAgent({ name: 'support', driver: { model }, workspace, capabilities: [memory({ stores })] })
  return { agent, model }
}

/** Every tool-result part the model received in its prompt at call `index`. */
export function toolResultsSeen(model: ScriptedModel, index: number): Array<{ toolName: string; toolCallId: string; output: any }> {
  const prompt = model.prompts[index] ?? []
  const results: Array<{ toolName: string; toolCallId: string; output: any }> = []
  for (const message of prompt) {
    if (message.role !== 'tool') continue
    for (const part of message.content) if (part.type === 'tool-result') results.push({ toolName: part.toolName, toolCallId: part.toolCallId, output: part.output })
  }
  return results
}

export const alice = { id: 'alice' }
export const bob = { id: 'bob' }

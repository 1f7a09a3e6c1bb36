import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { z } from 'zod'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { AgentRun, AgentRunEvent, AgentTool, AgentRunResult } from '../../src/agent/types.ts'

/** Collects every event of a run and its result. */
export async function collect(run: AgentRun): Promise<{ events: AgentRunEvent[]; result: AgentRunResult }> {
  const events: AgentRunEvent[] = []
  for await (const event of run) events.push(event)
  return { events, result: await run.result }
}

export function types(events: AgentRunEvent[]): string[] {
  return events.map((event) => event.type)
}

export function memoryWorkspace() {
  return createWorkspace({ storage: createStorage({ driver: memoryDriver() }) })
}

/** A temp dir removed after the test (call `cleanup`). */
export async function tempDir(): Promise<{ dir: string; cleanup: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-host-'))
  return { dir, cleanup: () => rm(dir, { recursive: true, force: true }) }
}

/** A notes "database" with a read tool and a write tool gated by approval, counting executions. */
export function notesTools(policy: AgentTool['policy'] = 'require-approval') {
  const notes = new Map<string, string>([['n1', 'first note']])
  const executed: Array<{ tool: string; input: unknown; approval?: { id: string; approver?: string; reason?: string } }> = []
  const read: AgentTool = {
    description: 'Read a note by id',
    inputSchema: z.object({ id: z.string() }),
    execute(input: { id: string }) {
      executed.push({ tool: 'read_note', input })
      return { id: input.id, text: notes.get(input.id) ?? null }
    },
  }
  const write: AgentTool = {
    description: 'Write a note',
    inputSchema: z.object({ id: z.string(), text: z.string().min(1) }),
    policy,
    approvalReason: (input: { id: string }) => `overwrite note ${input.id}`,
    approvalFingerprint: (input: { id: string }) => notes.get(input.id) ?? 'absent',
    execute(input: { id: string; text: string }, context) {
      executed.push({ tool: 'write_note', input, ...(context.approval ? { approval: context.approval } : {}) })
      notes.set(input.id, input.text)
      return { saved: input.id }
    },
  }
  return { notes, executed, tools: { read_note: read, write_note: write } }
}

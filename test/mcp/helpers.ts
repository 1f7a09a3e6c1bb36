import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { createWorkspace, defineAgent } from '../../src/index.ts'
import type { AgentDefinition, AgentRunEvent, ProviderRunContext, ToolPolicyDecision } from '../../src/index.ts'
import { memory, workspaceJsonlMemoryStore } from '../../src/capabilities/index.ts'
import type { MemoryOptions } from '../../src/capabilities/index.ts'
import type { Workspace } from '../../src/workspace/types.ts'

export type FsWorkspace = Workspace & { dir: string }

export function fsWorkspace(dir = mkdtempSync(join(tmpdir(), 'vam-mcp-'))): FsWorkspace {
  return Object.assign(createWorkspace({ dir }), { dir })
}

/** Lines of the default JSONL memory log of a workspace. */
export function jsonlLines(workspace: { dir: string }): Array<Record<string, unknown>> {
  const file = join(workspace.dir, 'memory/memory.jsonl')
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>)
}

/** Memory options with one per-user store; writes through tools with `policy`, or read-only with `write: 'off'`. */
export function userStore(policy: ToolPolicyDecision | 'off'): MemoryOptions {
  return {
    stores: {
      agent: {
        adapter: workspaceJsonlMemoryStore(),
        scope: ({ user }) => (user ? { agent: 'notes', user: user.id } : undefined),
        ...(policy === 'off' ? {} : { write: { mode: 'tool' as const, policy } }),
      },
    },
  }
}

/** A provider that hands each MCP client it opens to `script`, the way a real MCP-speaking agent would use it. */
export function scriptedProvider(script: (client: Client, context: ProviderRunContext) => Promise<void>, seen: ProviderRunContext[] = []) {
  return {
    seen,
    provider: {
      name: 'scripted',
      async run(context: ProviderRunContext) {
        seen.push(context)
        const client = (await context.connect()) as unknown as Client
        await script(client, context)
      },
    },
  }
}

export function providerAgent(options: MemoryOptions, provider: { run(context: ProviderRunContext): Promise<void> }, workspace: Workspace, approvalTimeoutMs?: number): AgentDefinition {
  return defineAgent({ name: 'notes', instructions: 'Keep notes for the user.', driver: { provider, ...(approvalTimeoutMs ? { approvalTimeoutMs } : {}) }, workspace, capabilities: [memory(options)] })
}

/** The text of an MCP tool result, parsed as JSON when it is JSON. */
export function resultText(result: unknown): string {
  const content = (result as { content: Array<{ type: string; text: string }> }).content
  return content.map((part) => part.text).join('')
}

/** Resolves when `events` (filled by iterating a run) gets an event of `type`. */
export async function nextEvent<T extends AgentRunEvent['type']>(events: AgentRunEvent[], type: T, after = 0): Promise<Extract<AgentRunEvent, { type: T }>> {
  for (let i = 0; i < 500; i++) {
    const found = events.slice(after).find((event) => event.type === type)
    if (found) return found as Extract<AgentRunEvent, { type: T }>
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error(`no ${type} event`)
}

/**
 * The connections a one-shot command's agents opened, closed when the command ends: an agent
 * whose workspace is on unstorage's Redis driver holds an ioredis connection, which keeps Node's
 * event loop alive, so `agent memory list` (or `agent dev` at the end of its input) would print its
 * answer and never exit. Servers (`agent studio`, `agent mcp` while it serves) keep theirs.
 */
import type { AgentDefinition } from '../agent/types.ts'

const loaded = new Set<AgentDefinition>()

/** Notes an agent the CLI loaded, so that {@link releaseLoadedAgents} closes what it holds. */
export function trackLoadedAgent(agent: AgentDefinition): void {
  loaded.add(agent)
}

/**
 * Disposes the workspace storage of every agent loaded since the last call (unstorage
 * `dispose()`: the Redis driver disconnects its client, the fs driver stops its watchers). A
 * failing dispose is ignored: the command's own result is already printed.
 */
export async function releaseLoadedAgents(): Promise<void> {
  const agents = [...loaded]
  loaded.clear()
  await Promise.allSettled(agents.map(agent => agent.workspace?.storage.dispose()))
}

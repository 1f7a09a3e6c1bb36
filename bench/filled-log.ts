/**
 * A JSONL memory log of the `npm run bench` workload kept on disk between bench runs: `size`
 * records round-robin over `scopes` scopes, every scope searched once (its index built) and a
 * checkpoint of the whole state written, as a store in use leaves it. Made at `base` when it has
 * no checkpoint yet; the benches copy it before they write.
 */
import { existsSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'
import { QUERIES, scopeOf } from './workload.ts'

export async function ensureFilledLog(base: string, size: number, scopes: number, contents: readonly string[]): Promise<void> {
  if (existsSync(join(base, 'memory/memory.jsonl.checkpoint'))) return
  rmSync(base, { recursive: true, force: true })
  const fill = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir: base }), writable: true })
  for (let n = 0; n < size; n++) await fill.append({ store: 'agent', scope: scopeOf(n, scopes) }, { kind: 'semantic', content: contents[n % contents.length]! }, { audit: { via: 'api' } })
  for (let s = 0; s < scopes; s++) await fill.search({ store: 'agent', scope: scopeOf(s, scopes) }, { query: QUERIES.common })
  await fill.log.checkpoint()
  // The threshold checkpoint the fill scheduled has run.
  await sleep(50)
}

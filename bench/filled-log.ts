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
import { QUERIES, scopeOf, scopeUser } from './workload.ts'

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

/**
 * What `npm run bench` does to a store opened on the filled log before its search rounds: every
 * scope searched once, 100 appends each after an idle turn (10 ms), 500 back to back, then one
 * more turn (20 ms), so the rounds meet the same loaded scopes and lines after the checkpoint.
 */
export async function useAsTheBenchDoes(store: ReturnType<ReturnType<typeof workspaceJsonlMemoryStore>['create']>, size: number, scopes: number, contents: readonly string[]): Promise<void> {
  const target = (n: number) => ({ store: 'agent', scope: { agent: 'bench', user: scopeUser(n, scopes) } })
  for (let s = 0; s < scopes; s++) await store.search(target(s), { query: QUERIES.common })
  for (let n = 0; n < 100; n++) {
    await sleep(10)
    await store.append(target(n), { kind: 'semantic', content: contents[n]! }, { audit: { via: 'api' } })
  }
  for (let n = 0; n < 500; n++) await store.append(target(n * 7), { kind: 'semantic', content: contents[(n * 7) % size]! }, { audit: { via: 'api' } })
  await sleep(20)
}

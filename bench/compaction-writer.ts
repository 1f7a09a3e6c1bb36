/**
 * Child of bench/compaction-large.ts: opens the store at the given workspace, writes once (its
 * state loaded), prints `ready`; on `go` it writes one record after each idle turn of 5 ms until
 * `stop`, then prints the most wall milliseconds one write took, the CPU milliseconds of all of
 * them, and how many it wrote.
 */
import { createInterface } from 'node:readline'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'

const [dir] = process.argv.slice(2) as [string]
const store = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
const target = { store: 'agent', scope: { agent: 'bench', user: 'u3' } }
await store.append(target, { kind: 'semantic', content: 'the writer is open' }, { audit: { via: 'api' } })
process.stdout.write('ready\n')
let stopped = false
const lines = createInterface({ input: process.stdin })
const commands = lines[Symbol.asyncIterator]()
await commands.next()
void commands.next().then(() => { stopped = true })
let longest = 0
let count = 0
const cpuStart = process.cpuUsage()
while (!stopped) {
  await new Promise(resolve => setTimeout(resolve, 5))
  const start = performance.now()
  await store.append(target, { kind: 'semantic', content: `a write during the compaction ${count}` }, { audit: { via: 'api' } })
  longest = Math.max(longest, performance.now() - start)
  count++
}
const used = process.cpuUsage(cpuStart)
process.stdout.write(`${longest} ${(used.user + used.system) / 1000} ${count}\n`)
process.exit(0)

/**
 * Compaction of a large log, and a writer in another process after it: a JSONL memory log of
 * `COMPACT_LINES` records (default 10,000) of about 4 KB each over 100 scopes; each round copies
 * it, starts a child process that opens the store and writes once (its state loaded), then has it
 * write a record every 5 ms while this process erases one record (an erase event and one
 * compaction: the rewrite of the whole log), and for 300 ms after. Prints the CPU and wall
 * milliseconds of the compaction here, and the longest write there and the CPU all its writes
 * took, min and median over `COMPACT_ROUNDS` rounds (default 5). After the rounds it checks the
 * last round's log: every write the child made is there once and the chain verifies.
 *
 * Usage: npx tsx bench/compaction-large.ts   (COMPACT_LINES=2000 for a quick look)
 */
import { spawn } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { setTimeout as sleep } from 'node:timers/promises'
import { verifyLog } from '../src/memory/event-log.ts'
import { hardDeleteMemoryRecord } from '../src/memory/retention.ts'
import { workspaceJsonlMemoryStore } from '../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../src/workspace/workspace.ts'

const LINES = Number(process.env.COMPACT_LINES ?? 10_000)
const ROUNDS = Number(process.env.COMPACT_ROUNDS ?? 5)
const SCOPES = 100
const WRITER = fileURLToPath(new URL('./compaction-writer.ts', import.meta.url))
const base = join(tmpdir(), `vam-compaction-large-${LINES}`)

function words(seed: number, count: number): string {
  let state = seed * 2654435761 >>> 0
  const out: string[] = []
  for (let index = 0; index < count; index++) {
    state = (state * 1103515245 + 12345) >>> 0
    out.push(`w${(state >>> 8) % 20_000}`)
  }
  return out.join(' ')
}

const target = (n: number) => ({ store: 'agent', scope: { agent: 'bench', user: `u${n % SCOPES}` } })

async function fill(): Promise<void> {
  if (existsSync(join(base, 'memory/memory.jsonl.checkpoint'))) return
  rmSync(base, { recursive: true, force: true })
  const store = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir: base }), writable: true })
  for (let n = 0; n < LINES; n++) await store.append(target(n), { kind: 'semantic', content: `record ${n} ${words(n, 640)}`.slice(0, 4000) }, { audit: { via: 'api' } })
  await store.log.checkpoint()
}

const cpu = () => { const used = process.cpuUsage(); return (used.user + used.system) / 1000 }
const stats = (values: number[]) => { const sorted = [...values].sort((a, b) => a - b); return { min: sorted[0]!, median: sorted[Math.floor(sorted.length / 2)]! } }

async function round(): Promise<{ compactCpu: number; compactWall: number; writeWall: number; writeCpu: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'vam-compaction-round-'))
  cpSync(base, dir, { recursive: true })
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, dir], { stdio: ['pipe', 'pipe', 'inherit'] })
  let out = ''
  const nextLine = () => new Promise<string>((resolve) => {
    const check = () => {
      const at = out.indexOf('\n')
      if (at === -1) return false
      const line = out.slice(0, at)
      out = out.slice(at + 1)
      resolve(line)
      return true
    }
    if (check()) return
    const listener = (chunk: Buffer) => { out += chunk.toString(); if (check()) child.stdout.off('data', listener) }
    child.stdout.on('data', listener)
  })
  if ((await nextLine()) !== 'ready') throw new Error('the writer did not start')
  const store = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: true })
  const victim = (await store.export(target(7)))[0]!
  child.stdin.write('go\n')
  await sleep(50)
  const cpuStart = cpu()
  const wallStart = performance.now()
  await hardDeleteMemoryRecord(store, target(7), victim.id, { audit: { via: 'api' } })
  const compactWall = performance.now() - wallStart
  const compactCpu = cpu() - cpuStart
  await sleep(300)
  child.stdin.write('stop\n')
  const [writeWall, writeCpu, writes] = (await nextLine()).split(' ').map(Number) as [number, number, number]
  const reader = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'bench', workspace: createWorkspace({ dir }), writable: false })
  const written = (await reader.export(target(3))).filter(record => record.content.startsWith('a write during the compaction')).map(record => record.content)
  if (written.length !== writes || new Set(written).size !== writes) throw new Error(`the child wrote ${writes} records, the log holds ${written.length} (${new Set(written).size} distinct)`)
  if (!(await verifyLog(createWorkspace({ dir }), 'memory/memory.jsonl')).ok) throw new Error('the log does not verify')
  rmSync(dir, { recursive: true, force: true })
  return { compactCpu, compactWall, writeWall, writeCpu }
}

await fill()
const results: Array<Awaited<ReturnType<typeof round>>> = []
for (let index = 0; index < ROUNDS; index++) results.push(await round())
const row = (name: string, values: number[]) => { const { min, median } = stats(values); console.log(`${name.padEnd(38)} min ${min.toFixed(0).padStart(7)} ms   median ${median.toFixed(0).padStart(7)} ms`) }
console.log(`${LINES} lines of ~4 KB, ${ROUNDS} rounds`)
row('erase + compaction, CPU', results.map(r => r.compactCpu))
row('erase + compaction, wall', results.map(r => r.compactWall))
row('other process: CPU of its writes', results.map(r => r.writeCpu))
row('other process: longest write, wall', results.map(r => r.writeWall))

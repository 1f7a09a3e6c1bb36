import { pathToFileURL } from 'node:url'
import { record, varied } from './search-corpus.ts'
const modulePath = process.env.SEARCH_MODULE ?? new URL('../src/memory/search-index.ts', import.meta.url).pathname
const { createSearchIndex } = await import(pathToFileURL(modulePath).href) as any
const scopes = Number(process.env.SCOPES ?? 1000)
const rounds = Number(process.env.ROUNDS ?? 1)
const recs: any[][] = []
for (let s = 0; s < scopes; s++) { const a = []; for (let k = 0; k < 100; k++) { const n = s * 100 + k; a.push(record(n, varied(n), { agent: `bench${s}` })) } recs.push(a) }
const cpu: number[] = [], wall: number[] = []
for (let r = 0; r < rounds; r++) for (let s = 0; s < scopes; s++) {
  const index = createSearchIndex()
  for (const x of recs[s]!) index.update(x)
  const c0 = process.cpuUsage(); const w0 = performance.now()
  index.search({ query: 'painting' })
  wall.push(performance.now() - w0); const c = process.cpuUsage(c0); cpu.push((c.user + c.system) / 1000)
}
const pct = (v: number[], p: number) => [...v].sort((a, b) => a - b)[Math.floor(p * v.length)]!
console.log(JSON.stringify({ cpuP50: pct(cpu, .5).toFixed(3), cpuP95: pct(cpu, .95).toFixed(3), wallP50: pct(wall, .5).toFixed(3), wallP95: pct(wall, .95).toFixed(3), wallMean: (wall.reduce((a, b) => a + b) / wall.length).toFixed(3) }))

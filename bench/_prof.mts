import { sqliteMemoryStore } from '/work/wt-db/src/memory/stores/sqlite.ts'
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
const f = sqliteMemoryStore({ file: join(mkdtempSync('/tmp/prof-'), 'x.db') })
const a = f.create()
const t = { store: 'agent', scope: { agent: 'bench', user: 'u1' } }
for (let i = 0; i < 300; i++) await a.append(t, { kind: 'semantic', content: `warm ${i} enjoys tea and coffee with a dog near the river on the weekend note` }, { audit: { via: 'api' } })
const times: number[] = []
for (let i = 0; i < 2000; i++) { const s = performance.now(); await a.append({ ...t, scope: { agent: 'bench', user: 'u' + (i % 50) } }, { kind: 'semantic', content: `User ${i} enjoys tea and coffee with a dog near the river on the weekend note ${i}` }, { audit: { via: 'api' } }); times.push(performance.now() - s) }
times.sort((x, y) => x - y); console.log('p50', times[1000])
let s = performance.now(); const f2 = sqliteMemoryStore({ file: f.file + '2' }); await f2.create().search(t, { query: 'x' }); console.log('open fresh+search', performance.now() - s)
await f.close(); s = performance.now(); const f3 = sqliteMemoryStore({ file: f.file }); await f3.create().search(t, { query: 'weekend' }); console.log('cold open+search', performance.now() - s)
s = performance.now(); await f3.create().search(t, { query: 'weekend' }); console.log('warm search', performance.now() - s)

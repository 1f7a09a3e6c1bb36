/**
 * One shape of `npm run bench`'s side-by-side (bench/side-by-side.ts) at 100,000 records, without
 * the rest of the bench: `BENCH_SCOPES` scopes (default 1; 1000 for the other shape), on a copy of
 * the filled log of bench/filled-log.ts (built once into a folder of the temp directory, reused).
 * Prints each subject's search figures (first searches, p50 / p95 median of the rounds);
 * `BENCH_ROUND_DETAIL=1` adds each round's, `BENCH_WARM_UP=0` turns the warm-up off. About 5 min
 * for one scope, 2 for 1,000 scopes. Run with `node --expose-gc --import tsx bench/side-by-side-shape.ts`.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ensureFilledLog } from './filled-log.ts'
import { measureSideBySide } from './side-by-side.ts'
import { workloadContents } from './workload.ts'

const SIZE = 100_000
const scopes = Number(process.env.BENCH_SCOPES ?? 1)
const base = join(tmpdir(), `vam-scope-tails-${SIZE}-${scopes}`)
const contents = workloadContents(SIZE)
await ensureFilledLog(base, SIZE, scopes, contents)
const dir = mkdtempSync(join(tmpdir(), 'vam-side-shape-'))
cpSync(join(base, 'memory'), join(dir, 'memory'), { recursive: true })
const figures = await measureSideBySide(dir, SIZE, scopes, contents)
const table: Record<string, Record<string, number>> = {}
for (const [subject, values] of Object.entries(figures)) {
  table[subject] = Object.fromEntries(Object.entries(values).filter(([key]) => key.startsWith('search') && !key.endsWith('MsMin')))
}
console.table(table)
rmSync(dir, { recursive: true, force: true })

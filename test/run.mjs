// `npm test`: runs vitest once with its JSON reporter beside the default one, then prints the
// closing line CI reads (`N passed, N failed`) and exits non-zero on any failure or on no test.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const out = join(mkdtempSync(join(tmpdir(), 'vam-test-')), 'vitest.json')
const run = spawnSync(
  process.execPath,
  ['node_modules/vitest/vitest.mjs', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${out}`, ...process.argv.slice(2)],
  { stdio: 'inherit' },
)
if (!existsSync(out)) {
  console.log('0 passed, 1 failed')
  process.exit(run.status || 1)
}
const report = JSON.parse(readFileSync(out, 'utf8'))
const passed = report.numPassedTests ?? 0
// Suites that fail to load count as failures: they hide every test inside them.
const failed = (report.numFailedTests ?? 0) + (report.numFailedTestSuites ?? 0)
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0)
console.log(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`)
process.exit(failed > 0 || passed === 0 || run.status !== 0 ? 1 : 0)

// `npm test`: builds the package, runs vitest once (its default reporter, plus test/closing-line-reporter.mjs which
// counts the results), then prints the closing line CI reads, `N passed, N failed` (with
// `, N skipped`, `, N todo` and `, N errors` when there are any), and exits non-zero on any failure, any
// error outside a test, or no test at all. Arguments are passed on to vitest.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'

// The tests that read dist/ (the packed package, the built studio, the public entries) share one
// build made before any of them runs, so no test rebuilds dist/ while another reads it. A runner
// started by a test (test/run.test.ts, inside a run that built dist/ already: VAM_TEST_BUILT)
// builds nothing.
const build = process.env.VAM_TEST_BUILT === '1' ? { status: 0 } : spawnSync('npm', ['run', 'build'], { stdio: 'inherit' })
if (build.status !== 0) {
  console.log('npm run build failed before the tests ran')
  console.log('0 passed, 1 failed')
  process.exit(build.status || 1)
}

const dir = mkdtempSync(join(tmpdir(), 'vam-test-'))
const countsFile = join(dir, 'counts.json')
const reporter = fileURLToPath(new URL('./closing-line-reporter.mjs', import.meta.url))
const vitest = fileURLToPath(new URL('../node_modules/vitest/vitest.mjs', import.meta.url))
const run = spawnSync(
  process.execPath,
  [vitest, 'run', '--reporter=default', `--reporter=${reporter}`, ...process.argv.slice(2)],
  { stdio: 'inherit', env: { ...process.env, VAM_TEST_COUNTS: countsFile, VAM_TEST_BUILT: '1' } },
)
if (!existsSync(countsFile)) {
  // vitest stopped before reporting (a broken config, a crash): nothing can be counted.
  rmSync(dir, { recursive: true, force: true })
  console.log(`vitest exited with ${run.status ?? run.signal} before reporting any result`)
  console.log('0 passed, 1 failed')
  process.exit(run.status || 1)
}
const counts = JSON.parse(readFileSync(countsFile, 'utf8'))
rmSync(dir, { recursive: true, force: true })
for (const failure of counts.loadFailures) console.log(`failed to load (counted as 1 failed test): ${failure}`)
for (const error of counts.errorsOutsideTests) console.log(`error outside a test: ${error}`)
const extra = [counts.skipped ? `, ${counts.skipped} skipped` : '', counts.todo ? `, ${counts.todo} todo` : '', counts.errors ? `, ${counts.errors} error${counts.errors === 1 ? '' : 's'}` : ''].join('')
console.log(`${counts.passed} passed, ${counts.failed} failed${extra}`)
process.exit(counts.failed > 0 || counts.errors > 0 || counts.passed === 0 || run.status !== 0 ? 1 : 0)

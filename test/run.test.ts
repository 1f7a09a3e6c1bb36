import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'

const RUNNER = fileURLToPath(new URL('./run.mjs', import.meta.url))
const CONFIG = fileURLToPath(new URL('./fixtures/run-counts/vitest.config.ts', import.meta.url))

/** Runs `npm test`'s runner on the fixture files in a real second vitest process. */
function runTests(include: string | undefined, config = CONFIG): { status: number | null, lines: string[] } {
  // The outer vitest's own variables would make the inner run think it is a worker.
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST') && key !== 'TEST' && key !== 'NODE_ENV'))
  if (include) env.RUN_COUNTS_INCLUDE = include
  const run = spawnSync(process.execPath, [RUNNER, '--config', config], { env, encoding: 'utf8', timeout: 60_000 })
  return { status: run.status, lines: run.stdout.trimEnd().split('\n') }
}

describe('npm test (test/run.mjs)', () => {
  it('the closing line counts each failed test once and a file that failed to load as one failed test, and exits 1', () => {
    // The fixtures: 5 passing tests, 1 skipped and 1 todo, 1 failing test inside a describe, a file that
    // throws while loading, a failing afterAll and an unhandled rejection.
    const run = runTests(undefined)
    expect(run.lines.at(-1)).toBe('5 passed, 2 failed, 1 skipped, 1 todo, 2 errors')
    expect(run.lines).toContainEqual(expect.stringMatching(/^failed to load \(counted as 1 failed test\): .*load-error\.fixture\.ts: this file fails while loading$/))
    expect(run.lines).toContainEqual(expect.stringMatching(/^error outside a test: .*hook-error\.fixture\.ts: clean-up failed after every test passed$/))
    expect(run.lines).toContainEqual('error outside a test: unhandled: unhandled rejection after the test')
    expect(run.status).toBe(1)
  })

  it('a run with one failing test closes with "1 failed", as vitest counts it', () => {
    const run = runTests('failing.fixture.ts')
    expect(run.lines.at(-1)).toBe('1 passed, 1 failed')
    expect(run.status).toBe(1)
  })

  it('a green run closes with its counts and exits 0', () => {
    const run = runTests('passing.fixture.ts')
    expect(run.lines.at(-1)).toBe('2 passed, 0 failed, 1 skipped, 1 todo')
    expect(run.status).toBe(0)
  })

  it('a run that finds no test exits 1', () => {
    const run = runTests('no-such.fixture.ts')
    expect(run.lines.at(-1)).toBe('0 passed, 0 failed')
    expect(run.status).toBe(1)
  })

  it('a vitest that stops before reporting closes with "0 passed, 1 failed"', () => {
    const run = runTests(undefined, fileURLToPath(new URL('./fixtures/run-counts/no-such.config.ts', import.meta.url)))
    expect(run.lines.at(-1)).toBe('0 passed, 1 failed')
    expect(run.status).toBe(1)
  })
})

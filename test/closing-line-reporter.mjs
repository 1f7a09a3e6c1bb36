// A vitest reporter for `npm test` (test/run.mjs): counts what vitest itself counts, from the
// reported test modules and the run's unhandled errors, and writes them to the JSON file named by
// VAM_TEST_COUNTS. A test file that fails to load (no test collected) counts as one failed test,
// since it hides every test inside it; an error outside any test (a failed afterAll, an unhandled
// rejection) is counted as an error, not as an extra failed test.

/** @typedef {{ passed: number, failed: number, skipped: number, todo: number, errors: number, loadFailures: string[], errorsOutsideTests: string[] }} TestCounts */

/** @returns {TestCounts} */
export function countTests(testModules, unhandledErrors) {
  /** @type {TestCounts} */
  const counts = { passed: 0, failed: 0, skipped: 0, todo: 0, errors: 0, loadFailures: [], errorsOutsideTests: [] }
  for (const module of testModules) {
    let collected = 0
    for (const test of module.children.allTests()) {
      collected++
      const state = test.result().state
      if (state === 'passed') counts.passed++
      else if (state === 'failed') counts.failed++
      else if (test.options.mode === 'todo') counts.todo++
      else counts.skipped++
    }
    const errors = [...module.errors(), ...[...module.children.allSuites()].flatMap(suite => suite.errors())]
    if (errors.length === 0 && module.state() !== 'failed') continue
    if (collected === 0) {
      counts.failed++
      counts.loadFailures.push(`${module.moduleId}: ${errors[0]?.message ?? 'failed before any test was collected'}`)
    }
    else if (errors.length > 0) {
      counts.errors += errors.length
      for (const error of errors) counts.errorsOutsideTests.push(`${module.moduleId}: ${error.message}`)
    }
  }
  for (const error of unhandledErrors) {
    counts.errors++
    counts.errorsOutsideTests.push(`unhandled: ${error.message ?? String(error)}`)
  }
  return counts
}

export default class ClosingLineReporter {
  async onTestRunEnd(testModules, unhandledErrors) {
    const file = process.env.VAM_TEST_COUNTS
    if (!file) return
    const { writeFile } = await import('node:fs/promises')
    await writeFile(file, JSON.stringify(countTests(testModules, unhandledErrors)))
  }
}

import { spawnSync } from 'node:child_process'
import { join } from 'node:path'

const REPO_ROOT = join(import.meta.dirname, '..', '..')

/** What one run of the `agent` CLI printed, and its exit status (`null`: killed at its timeout). */
export interface AgentCliResult {
  stdout: string
  stderr: string
  status: number | null
}

/**
 * Runs the `agent` CLI from source as a real child process (`node --import tsx src/cli/main.ts
 * ...args`) in the repository, with `input` on its standard input, `NO_COLOR=1` and `env` over
 * this process's environment, killed after `timeoutMs` (default 60,000: one launch costs 1.2-1.6 s
 * of CPU, several times that in wall time on a loaded machine).
 */
export function runAgentCli(args: readonly string[], options: { input?: string; env?: Record<string, string>; timeoutMs?: number } = {}): AgentCliResult {
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/cli/main.ts'), ...args], {
    cwd: REPO_ROOT,
    input: options.input ?? '',
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    env: { ...process.env, NO_COLOR: '1', ...options.env },
  })
  return { stdout: result.stdout, stderr: result.stderr, status: result.status }
}

import { spawnSync } from 'node:child_process'
import { join } from 'node:path'
import { describe, expect, it, vi } from 'vitest'
import { REPO_ROOT } from './locomo.ts'

// Each test launches the CLI as child processes, 1.2-1.6 s of CPU each (tsx loading src/): at a load
// of 15-20 on two cores a launch takes 5-8 s of wall time, so several exceed vitest's 30 s. Every
// launch keeps its own spawn timeout (60 s), which still fails a launch that hangs.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 })

/**
 * The `agent` help as a user sees it through a pipe: a real child process with stdout piped, a
 * colour-capable TERM and no NO_COLOR, so that only the pipe decides about colour codes.
 */
function agent(...args: string[]) {
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: 'xterm-256color' }
  delete env.NO_COLOR
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'src/cli/main.ts'), ...args], { cwd: REPO_ROOT, encoding: 'utf8', timeout: 60_000, env })
  return { stdout: result.stdout, stderr: result.stderr, status: result.status }
}

const MEMORY_SUBCOMMANDS = ['import', 'export', 'erase', 'list', 'search', 'verify', 'compact']
// eslint-disable-next-line no-control-regex
const ANSI = /\u001B\[/

// Each case starts Node processes (about 2 s each on a loaded machine).
describe('agent help', { timeout: 240_000 }, () => {
  it('agent alone prints the help and exits 0', () => {
    const { stdout, status } = agent()
    expect(status).toBe(0)
    expect(stdout).toContain('USAGE agent dev|info|memory|mcp')
  })

  it('agent --help lists all memory subcommands', () => {
    const { stdout, status } = agent('--help')
    expect(status).toBe(0)
    const memoryLine = stdout.split('\n').find(line => line.trim().startsWith('memory'))!
    for (const name of MEMORY_SUBCOMMANDS) expect(memoryLine).toContain(name)
    expect(agent('memory', '--help').stdout).toContain(`USAGE agent memory ${MEMORY_SUBCOMMANDS.join('|')}`)
  })

  it('help printed into a pipe carries no colour codes', () => {
    for (const args of [[], ['--help'], ['memory', '--help'], ['memory', 'list', '--help']]) expect(agent(...args).stdout).not.toMatch(ANSI)
  })

  it('no option says its default twice', () => {
    for (const args of [['dev'], ['info'], ['mcp'], ...MEMORY_SUBCOMMANDS.map(name => ['memory', name])]) {
      const { stdout } = agent(...args, '--help')
      for (const line of stdout.split('\n')) expect(line.match(/\(default: /gi)?.length ?? 0, `${args.join(' ')}: ${line}`).toBeLessThanOrEqual(1)
    }
    expect(agent('memory', 'list', '--help').stdout).toMatch(/--user=<user>\s+User id the agent runs for \(Default: demo\)/)
  })

  it('a missing --agent, a missing query and an unknown command are coded errors with a fix, without colour codes into a pipe, exit 1', () => {
    const missingAgent = agent('memory', 'list')
    expect(missingAgent.stderr).toContain('CLI_MISSING_ARGUMENT: agent memory list needs --agent. Fix: pass --agent <agent> (see agent memory list --help)')
    expect(missingAgent.stdout).toContain('USAGE memory list [OPTIONS] --agent=<agent>')
    expect(missingAgent.status).toBe(1)
    const missingQuery = agent('memory', 'search', '--agent', 'support')
    expect(missingQuery.stderr).toContain('CLI_MISSING_ARGUMENT: agent memory search needs its query argument')
    expect(missingQuery.status).toBe(1)
    const unknown = agent('memory', 'lsit')
    expect(unknown.stderr).toContain('CLI_UNKNOWN_COMMAND: agent memory has no command "lsit". Fix: use one of import, export, erase, list, search, verify, compact')
    expect(unknown.status).toBe(1)
    for (const result of [missingAgent, missingQuery, unknown]) expect(result.stdout + result.stderr).not.toMatch(ANSI)
  })

  it('a flag the command does not take is an error: agent memory compact --agent support exits 2 naming it', () => {
    const { stderr, status } = agent('memory', 'compact', '--agent', 'support')
    expect(status).toBe(2)
    expect(stderr).toContain('CLI_UNKNOWN_OPTION: unknown option --agent')
  })
})

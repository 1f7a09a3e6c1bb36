import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { beforeAll, describe, expect, it, vi } from 'vitest'
import { runAgentCli, type AgentCliResult } from '../helpers/agent-cli.ts'
import { CONV_26, HAS_LOCOMO, REPO_ROOT, countObservations } from './locomo.ts'

// Each test launches the CLI as child processes, 1.2-1.6 s of CPU each (tsx loading src/): at a load
// of 15-20 on two cores a launch takes 5-8 s of wall time, so several exceed vitest's 30 s. Every
// launch keeps its own spawn timeout (60 s), which still fails a launch that hangs.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 })

/**
 * The `agent` CLI run as a real child process (`node --import tsx src/cli/main.ts`), with piped
 * stdin and the playground `support` agent writing into a temporary workspace
 * (`AGENT_WORKSPACE_DIR`), so nothing is written into the repository.
 */
/**
 * Runs the CLI from source as a child process. Each launch costs about 1.2-1.6 s of CPU (tsx loads
 * src/, about 1 s; the support agent's local embedder, 0.2-0.4 s): at a load of 15-20 on two cores
 * that is 5-8 s of wall time, so a test that launches several gives itself {@link perLaunch} each.
 */
function agentCli(args: string[], options: { workspace: string; input?: string; env?: Record<string, string> }): AgentCliResult {
  // No provider keys: the support agent uses its deterministic driver.
  return runAgentCli(args, { input: options.input ?? '', env: { AGENT_WORKSPACE_DIR: options.workspace, OPENAI_API_KEY: '', ANTHROPIC_API_KEY: '', SUPPORT_AGENT_DRIVER: 'scripted', ...options.env } })
}

/** The vitest timeout of a test that launches the CLI `launches` times: each launch may take up to its own 60 s spawn timeout under load. */
const perLaunch = (launches: number) => launches * 60_000

/** An empty temporary workspace (not a copy of playground/.agent/workspace: that is local, git-ignored state). */
function freshWorkspace(): string {
  return mkdtempSync(join(tmpdir(), 'vam-cli-ws-'))
}

/** The JSONL log lines of the support agent's memory store. */
function logLines(workspace: string): Record<string, unknown>[] {
  const file = join(workspace, 'memory', 'memory.jsonl')
  if (!existsSync(file)) return []
  return readFileSync(file, 'utf8').split('\n').filter(line => line.trim() !== '').map(line => JSON.parse(line) as Record<string, unknown>)
}

/** Every value stored under `key` anywhere inside `value`. */
function valuesOf(value: unknown, key: string): unknown[] {
  if (!value || typeof value !== 'object') return []
  const own = !Array.isArray(value) && key in value ? [(value as Record<string, unknown>)[key]] : []
  return [...own, ...Object.values(value).flatMap(child => valuesOf(child, key))]
}

describe('agent info', () => {
  it('agent info prints the driver and capabilities and lists no memory tools', () => {
    const { stdout, status } = agentCli(['info', '--agent', 'support', '--root', 'playground'], { workspace: freshWorkspace() })
    expect(status).toBe(0)
    expect(stdout).toContain('agent: support')
    expect(stdout).toContain('driver: custom-run')
    expect(stdout).toContain('capabilities: memory')
    expect(stdout).toContain('tools: none')
    expect(stdout).toContain('added at invocation time')
    expect(stdout).not.toMatch(/^\s*memory_(search|read|remember|delete)/m)
  })

  it('a misspelled option exits 1 with CLI_UNKNOWN_OPTION naming it instead of being ignored', () => {
    const { stderr, status } = agentCli(['dev', '--agent', 'support', '--usr', 'alice'], { workspace: freshWorkspace(), input: 'hello\n' })
    expect(status).toBe(1)
    expect(stderr).toContain('CLI_UNKNOWN_OPTION: unknown option --usr')
  })

  it('relative paths in an agent module resolve against --root, not the shell\'s folder', () => {
    const root = mkdtempSync(join(tmpdir(), 'vam-cli-root-'))
    mkdirSync(join(root, 'server', 'agents'), { recursive: true })
    writeFileSync(join(root, 'server', 'agents', 'probe.ts'), [
      `import { createWorkspace, defineAgent } from ${JSON.stringify(join(REPO_ROOT, 'src/index.ts'))}`,
      `export default defineAgent({ name: 'probe', driver: { run() {} }, workspace: createWorkspace() })`,
    ].join('\n'))
    const { stdout, status } = agentCli(['info', '--agent', 'probe', '--root', root], { workspace: freshWorkspace() })
    expect(status).toBe(0)
    expect(stdout).toContain(`workspace: ${join(realpathSync(root), '.agent', 'workspace')}`)
  })

  it('an unknown agent exits 1 with AGENT_NOT_FOUND listing the agents that exist', () => {
    const { stderr, status } = agentCli(['info', '--agent', 'nobody'], { workspace: freshWorkspace() })
    expect(status).toBe(1)
    expect(stderr).toMatch(/AGENT_NOT_FOUND: .*agents found: support/)
  })
})

describe('agent dev', () => {
  it('a question shows a memory_search tool step and its result', () => {
    const { stdout, status } = agentCli(['dev', '--agent', 'support'], { workspace: freshWorkspace(), input: 'what do you know about green tea\n' })
    expect(status).toBe(0)
    expect(stdout).toContain('> what do you know about green tea')
    expect(stdout).toContain('[tool] memory_search {"query":"what do you know about green tea"}')
    expect(stdout).toMatch(/^\[result\] \{"store":"agent","results":\[\]\}$/m)
    expect(stdout).toContain('I found nothing in my memory for that')
  })

  it('remember waits for approval, y saves it, and the JSONL line has the scope and provenance', () => {
    const workspace = freshWorkspace()
    const { stdout, status } = agentCli(['dev', '--agent', 'support', '--user', 'demo'], { workspace, input: 'remember I prefer green tea\ny fine by me\n' })
    expect(status).toBe(0)
    expect(stdout).toContain('[tool] memory_remember {"content":"I prefer green tea","kind":"semantic"}')
    expect(stdout).toContain('Approve memory_remember {"content":"I prefer green tea","kind":"semantic"}? [y/N, then an optional reason] y fine by me')
    const saved = /Saved (\S+)\./.exec(stdout)
    expect(saved).not.toBeNull()
    const lines = logLines(workspace)
    const line = lines.find(entry => JSON.stringify(entry).includes('I prefer green tea'))
    expect(line).toBeDefined()
    expect(valuesOf(line, 'scope')).toContainEqual({ agent: 'support', user: 'demo' })
    expect(valuesOf(line, 'provenance')[0]).toMatchObject({ source: 'tool', toolName: 'memory_remember' })
    expect(JSON.stringify(line)).toContain(saved![1]!.replace(/\.$/, ''))
    expect(valuesOf(line, 'approver')).toContain('demo')
  })

  it('a command typed at the approval question is not taken as a denial: the question is asked again', () => {
    const workspace = freshWorkspace()
    const { stdout } = agentCli(['dev', '--agent', 'support', '--user', 'demo'], { workspace, input: 'remember I prefer oolong\n/approvals\ny\n' })
    expect(stdout).toContain('answer y or n (then an optional reason)')
    expect(stdout).toMatch(/Saved mem_/)
    expect(stdout).not.toContain('denied')
  })

  it('remember answered n writes nothing and says why', () => {
    const workspace = freshWorkspace()
    const { stdout, status } = agentCli(['dev', '--agent', 'support'], { workspace, input: 'remember I prefer green tea\nn not now\n' })
    expect(status).toBe(0)
    expect(stdout).toContain('Approve memory_remember')
    expect(stdout).toContain('Not saved: not now.')
    expect(logLines(workspace).filter(entry => JSON.stringify(entry).includes('green tea'))).toEqual([])
  })

  it('a remembered fact is found by a later question on the same user, not by another user', () => {
    const workspace = freshWorkspace()
    // Full text finds the fact; the embedder (0.2-0.4 s of CPU a launch) adds nothing this test reads.
    const env = { SUPPORT_AGENT_EMBED: 'off' }
    const saved = agentCli(['dev', '--agent', 'support', '--user', 'ann'], { workspace, env, input: 'remember Ann prefers green tea\ny\n' })
    expect([saved.status, saved.stdout]).toEqual([0, expect.stringMatching(/Saved mem_/)])
    const ann = agentCli(['dev', '--agent', 'support', '--user', 'ann'], { workspace, env, input: 'green tea\n' })
    expect(ann.stdout).toMatch(/- Ann prefers green tea \(/)
    const bo = agentCli(['dev', '--agent', 'support', '--user', 'bo'], { workspace, env, input: 'green tea\n' })
    expect(bo.status).toBe(0)
    expect(bo.stdout).toContain('[tool] memory_search')
    expect(bo.stdout).not.toContain('Ann prefers green tea')
  }, perLaunch(3))

  it('an approval left pending at the end of input is answered with /approve in a later session, once', () => {
    const workspace = freshWorkspace()
    const first = agentCli(['dev', '--agent', 'support', '--user', 'ann'], { workspace, input: 'remember Ann collects stamps\n' })
    const id = /approval (apr_\S+) left pending \(end of input\); answer it later with \/approve (apr_\S+)/.exec(first.stdout)
    expect(id?.[1]).toBe(id?.[2])
    expect(logLines(workspace).filter(entry => JSON.stringify(entry).includes('stamps'))).toEqual([])
    const later = agentCli(['dev', '--agent', 'support', '--user', 'ann'], { workspace, input: `/approve ${id![1]} checked\n/approve ${id![1]}\n` })
    expect(later.stdout).toContain('[approval] approved by ann: checked')
    expect(later.stdout).toMatch(/Saved mem_/)
    expect(later.stdout).toContain('APPROVAL_ALREADY_RESOLVED')
    expect(logLines(workspace).filter(entry => JSON.stringify(entry).includes('stamps'))).toHaveLength(1)
  })

  it('/deny of another user\'s pending approval answers like an unknown id and writes nothing', () => {
    const workspace = freshWorkspace()
    const first = agentCli(['dev', '--agent', 'support', '--user', 'ann'], { workspace, input: 'remember Ann collects stamps\n' })
    const id = /approval (apr_\S+) left pending/.exec(first.stdout)![1]!
    const other = agentCli(['dev', '--agent', 'support', '--user', 'bo'], { workspace, input: `/approve ${id}\n` })
    expect(other.stdout).toContain('APPROVAL_NOT_FOUND')
    expect(logLines(workspace).filter(entry => JSON.stringify(entry).includes('stamps'))).toEqual([])
  })

  it('forget <id> deletes the record after approval and search no longer finds it', () => {
    const workspace = freshWorkspace()
    const saved = agentCli(['dev', '--agent', 'support'], { workspace, input: 'remember I like oolong\ny\n' })
    const id = /Saved (\S+)\./.exec(saved.stdout)![1]!
    const { stdout } = agentCli(['dev', '--agent', 'support'], { workspace, input: `forget ${id}\ny\noolong\n` })
    expect(stdout).toContain(`[tool] memory_delete {"id":"${id}"}`)
    expect(stdout).toContain(`Approve memory_delete {"id":"${id}"}? [y/N, then an optional reason] y`)
    expect(stdout).toContain(`Deleted ${id}.`)
    expect(stdout).toContain('I found nothing in my memory for that')
    // Soft delete: the original line stays and a tombstone follows it.
    expect(logLines(workspace).filter(entry => JSON.stringify(entry).includes(id))).toHaveLength(2)
  })

  it('/exit ends the chat with status 0 and ignores the lines after it', () => {
    const { stdout, status } = agentCli(['dev', '--agent', 'support'], { workspace: freshWorkspace(), input: '/exit\nwhat about tea\n' })
    expect(status).toBe(0)
    expect(stdout).not.toContain('[tool]')
  })

  it('/approvals lists pending approvals', () => {
    const workspace = freshWorkspace()
    // End of input at the approval prompt leaves the approval pending.
    agentCli(['dev', '--agent', 'support'], { workspace, input: 'remember I like oolong\n' })
    const { stdout } = agentCli(['dev', '--agent', 'support'], { workspace, input: '/approvals\n' })
    expect(stdout).toMatch(/^apr_\S+\s+memory_remember \{"content":"I like oolong","kind":"semantic"\}/m)
  })
})

describe.skipIf(!HAS_LOCOMO)('agent memory import --locomo', () => {
  const workspace = freshWorkspace()
  const expected = HAS_LOCOMO ? countObservations(CONV_26) : new Map<string, number>()
  const total = [...expected.values()].reduce((sum, n) => sum + n, 0)
  let first: ReturnType<typeof agentCli>

  // A child process that starts tsx and imports a whole conversation: allowed more than the default hook time on a loaded machine.
  beforeAll(() => {
    first = agentCli(['memory', 'import', '--agent', 'support', '--locomo', CONV_26], { workspace })
  }, 120_000)

  it('imports one record per observation, one scope per speaker', () => {
    expect(first.status).toBe(0)
    expect(first.stdout).toContain(`imported ${total} of ${total} observations (0 already present)`)
    for (const [speaker, count] of expected) expect(first.stdout).toContain(`${speaker}: ${count} added, 0 already present (store agent, scope {"agent":"support","user":"${speaker}"})`)
    const lines = logLines(workspace)
    expect(lines).toHaveLength(total)
    expect(valuesOf(lines[0], 'provenance')[0]).toEqual({ source: 'import', file: 'conv-26.json' })
    expect(lines[0]!.occurredAt).toBe(lines[0]!.createdAt)
  })

  it('embeds the imported records for the store\'s semantic search (the playground agent uses localEmbedder) and stores their vectors', () => {
    for (const [speaker, count] of expected) expect(first.stdout).toContain(`${speaker}: embedded ${count} records for semantic search`)
    const vectors = readFileSync(join(workspace, 'memory', 'memory.jsonl.vectors'), 'utf8').split('\n').filter(Boolean).map(line => JSON.parse(line) as { id: string; dims: number; model: string })
    expect(vectors).toHaveLength(total)
    expect(new Set(vectors.map(vector => vector.id))).toEqual(new Set(logLines(workspace).map(line => line.recordId)))
    expect(vectors.every(vector => vector.dims === 512 && vector.model === 'energetic-ai/universal-sentence-encoder-lite-en')).toBe(true)
  })

  it('a question about a speaker in agent dev --user <speaker> returns that speaker\'s facts', () => {
    const data = JSON.parse(readFileSync(CONV_26, 'utf8')) as Record<string, unknown>
    const facts = (speaker: string) => Object.entries(data)
      .filter(([key]) => /^session_\d+_observation$/.test(key))
      .flatMap(([, value]) => ((value as Record<string, [string, unknown][]>)[speaker] ?? []).map(([fact]) => fact))
    const { stdout, status } = agentCli(['dev', '--agent', 'support', '--user', 'Caroline'], { workspace, input: 'What did Caroline research?\n' })
    expect(status).toBe(0)
    expect(stdout).toContain('[tool] memory_search {"query":"What did Caroline research?"}')
    const listed = [...stdout.matchAll(/^- (.*) \(rec[^)]*\)$|^- (.*) \([^)]*\)$/gm)].map(match => match[1] ?? match[2])
    expect(listed.length).toBeGreaterThan(0)
    const caroline = new Set(facts('Caroline'))
    for (const fact of listed) expect(caroline.has(fact!)).toBe(true)
    expect(listed.some(fact => /research/i.test(fact!))).toBe(true)
  })

  it('--scope conversation imports the whole conversation into one scope named after the file, as the retrieval protocol does', () => {
    const own = freshWorkspace()
    const result = agentCli(['memory', 'import', '--agent', 'support', '--locomo', CONV_26, '--scope', 'conversation'], { workspace: own })
    expect(result.status).toBe(0)
    expect(result.stdout).toContain(`conv-26: ${total} added, 0 already present (store agent, scope {"agent":"support","user":"conv-26"})`)
    expect(new Set(logLines(own).map(line => JSON.stringify(line.scope)))).toEqual(new Set([JSON.stringify({ agent: 'support', user: 'conv-26' })]))
  }, 120_000)

  it('--scope other than speaker or conversation is CLI_INVALID_SCOPE and writes nothing', () => {
    const own = freshWorkspace()
    const result = agentCli(['memory', 'import', '--agent', 'support', '--locomo', CONV_26, '--scope', 'session'], { workspace: own })
    expect(result.status).not.toBe(0)
    expect(result.stderr).toContain('CLI_INVALID_SCOPE')
    expect(logLines(own)).toEqual([])
  })

  it('re-importing the same file adds nothing', () => {
    const again = agentCli(['memory', 'import', '--agent', 'support', '--locomo', CONV_26], { workspace })
    expect(again.status).toBe(0)
    expect(again.stdout).toContain(`imported 0 of ${total} observations (${total} already present)`)
    expect(logLines(workspace)).toHaveLength(total)
  })
})

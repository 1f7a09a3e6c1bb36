// The package in someone else's app: `npm pack` the build, install the tarball into a fresh
// `npm init -y` app (CommonJS by default) with `ai` and `zod` at versions other than the ones this
// repository pins, then run what a new user runs: the README's quick start pasted as it is,
// `npx agent dev` and `npx agent info`, `import()` and `require()` from CommonJS, `tsc --noEmit`
// with `skipLibCheck: false` over every public entry, the Vite plugin's routes in the app's
// own dev server, and `npx agent memory erase` over what they all wrote. Needs the npm registry
// (or a warm npm cache). Prints the install size and the time from `npm install` to the first answer.
import { spawn } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { filesHolding } from '../helpers/erased-text.ts'

const REPO = fileURLToPath(new URL('../..', import.meta.url))
const MANIFEST = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { version: string, devDependencies: Record<string, string> }

/**
 * What the app installs beside the package: the lowest `ai` and `zod` of the peer ranges (the
 * repository itself tests the pinned, newer ones) and a `vite` other than the pinned one.
 */
const APP_VERSIONS = { 'ai': '6.0.300', 'zod': '4.4.0', 'vite': '8.4.0' }
/** Tools the checks need, at the repository's pins. */
const TOOL_VERSIONS = { 'typescript': MANIFEST.devDependencies.typescript!, '@types/node': MANIFEST.devDependencies['@types/node']! }

interface Result {
  code: number | null
  stdout: string
  stderr: string
}

/** The environment of the app's commands: none of this repository's npm or vitest variables. */
function appEnv(): NodeJS.ProcessEnv {
  const kept = Object.entries(process.env).filter(([key]) => !/^(npm_|VITEST|NODE_OPTIONS$|NODE_ENV$|TEST$)/i.test(key) || /^npm_config_(cache|registry|userconfig)$/i.test(key))
  return { ...Object.fromEntries(kept), NO_COLOR: '1', npm_config_update_notifier: 'false', npm_config_fund: 'false', npm_config_audit: 'false' }
}

/** Runs a command to its end (never throws for a non-zero exit). */
function run(command: string, args: string[], options: { cwd: string, input?: string, timeoutMs?: number }): Promise<Result> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: appEnv(), stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
    child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000)
    child.on('error', reject)
    child.on('close', (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(options.input ?? '')
  })
}

/** Like {@link run}, failing with the command's output when it exits non-zero. */
async function ok(command: string, args: string[], options: { cwd: string, input?: string, timeoutMs?: number }): Promise<Result> {
  const result = await run(command, args, options)
  if (result.code !== 0) throw new Error(`${command} ${args.join(' ')} exited with ${result.code}\n${result.stdout}\n${result.stderr}`)
  return result
}

/** The TypeScript blocks of the README that start with a `// <path>` line: the files of the quick start. */
function readmeFiles(): Map<string, string> {
  const readme = readFileSync(join(REPO, 'README.md'), 'utf8')
  const files = new Map<string, string>()
  for (const match of readme.matchAll(/```ts\n\/\/ (\S+)\n([\s\S]*?)```/g)) files.set(match[1]!, `// ${match[1]}\n${match[2]}`)
  return files
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0))
    })
  })
}

let app = ''
let tarball = ''
let packedFiles: string[] = []
let installStartedAt = 0
let installMs = 0
let installKilobytes = 0
let firstAnswerMs: number | undefined
const QUICK_START_INPUT = 'remember I prefer window seats\ny\nwindow seats\n'

beforeAll(async () => {
  app = mkdtempSync(join(tmpdir(), 'vam-consumer-'))
  // `npm test` builds dist/ before any test runs (test/run.mjs); run alone, this test builds it.
  if (process.env.VAM_TEST_BUILT !== '1') await ok('npm', ['run', 'build'], { cwd: REPO, timeoutMs: 180_000 })
  const packed = await ok('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', app], { cwd: REPO })
  const [pack] = JSON.parse(packed.stdout) as Array<{ filename: string, files: Array<{ path: string }> }>
  tarball = join(app, pack!.filename)
  packedFiles = pack!.files.map(file => file.path)
  await ok('npm', ['init', '-y'], { cwd: app })
  for (const [path, text] of readmeFiles()) {
    mkdirSync(dirname(join(app, path)), { recursive: true })
    writeFileSync(join(app, path), text)
  }
  // What a new user installs: the package and its two required peers, nothing else.
  installStartedAt = performance.now()
  await ok('npm', ['install', '--prefer-offline', tarball, `ai@${APP_VERSIONS.ai}`, `zod@${APP_VERSIONS.zod}`], { cwd: app, timeoutMs: 180_000 })
  installMs = performance.now() - installStartedAt
  installKilobytes = Number((await ok('du', ['-sk', 'node_modules'], { cwd: app })).stdout.split(/\s/)[0])
}, 300_000)

afterAll(() => {
  console.log(`consumer app: npm install of the package + ai + zod took ${(installMs / 1000).toFixed(1)} s, node_modules is ${(installKilobytes / 1024).toFixed(1)} MB; first answer ${firstAnswerMs === undefined ? 'never came' : `${(firstAnswerMs / 1000).toFixed(1)} s after npm install started`}`)
  if (app && !process.env.VAM_KEEP_CONSUMER_APP) rmSync(app, { recursive: true, force: true })
})

describe('the packed package in a fresh npm init -y app', () => {
  it('the tarball holds dist, docs, README, LICENSE and package.json only, and every docs link of the README is in it', () => {
    expect(packedFiles.filter(path => !path.startsWith('dist/') && !path.startsWith('docs/')).sort()).toEqual(['LICENSE', 'README.md', 'package.json'])
    expect(packedFiles).toContain('dist/cli/main.mjs')
    const links = [...readFileSync(join(REPO, 'README.md'), 'utf8').matchAll(/\]\((docs\/[^)#\s]+)/g)].map(match => match[1]!)
    expect(links.length).toBeGreaterThan(5)
    for (const link of links) expect(packedFiles, link).toContain(link)
    // Every relative link of every packed page (README and docs/) points at a file of the package.
    const broken: string[] = []
    for (const page of packedFiles.filter(path => path.endsWith('.md'))) {
      for (const [, target] of readFileSync(join(REPO, page), 'utf8').matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (/^[a-z]+:/i.test(target!)) continue
        const resolved = join(dirname(page), target!)
        if (!packedFiles.includes(resolved) && !packedFiles.some(path => path.startsWith(`${resolved}/`))) broken.push(`${page} -> ${target}`)
      }
    }
    expect(broken).toEqual([])
    const manifest = JSON.parse(readFileSync(join(app, 'node_modules/vite-agent-memory/package.json'), 'utf8')) as { repository?: { url?: string } }
    expect(manifest.repository?.url).toMatch(/^git\+https:\/\/github\.com\//)
  })

  it('npm init -y writes a CommonJS app', () => {
    expect(JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')).type).toBe('commonjs')
  })

  it('the README quick start, pasted, remembers a fact after approval and answers from memory in npx agent dev', async () => {
    const chat = await run('npx', ['--no-install', 'agent', 'dev', '--agent', 'support'], { cwd: app, input: QUICK_START_INPUT, timeoutMs: 120_000 })
    firstAnswerMs = performance.now() - installStartedAt
    expect(chat.stderr).not.toMatch(/ERROR/)
    expect(chat.stdout).toContain('[tool] memory_remember {"content":"I prefer window seats","kind":"semantic"}')
    expect(chat.stdout).toContain('[approval] approved by demo')
    expect(chat.stdout).toContain('Saved.')
    expect(chat.stdout).toContain('I remember: I prefer window seats')
    expect(chat.code).toBe(0)
  }, 150_000)

  it('a model-driven run on the app\'s ai (scriptedModel): memory_remember waits for approval, then memory_search finds the record', async () => {
    writeFileSync(join(app, 'model-turn.mjs'), `
      import { createWorkspace, defineAgent, resolveApproval, runAgent } from 'vite-agent-memory'
      import { memory, workspaceJsonlMemoryStore } from 'vite-agent-memory/capabilities'
      import { scriptedModel } from 'vite-agent-memory/testing'
      const model = scriptedModel([
        { toolCalls: [{ toolName: 'memory_remember', input: { content: 'I drink green tea', kind: 'semantic' } }] },
        { text: 'Saved.' },
        { toolCalls: [{ toolName: 'memory_search', input: { query: 'green tea' } }] },
        { text: 'You drink green tea.' },
      ])
      const agent = defineAgent({
        name: 'model',
        driver: { model },
        workspace: createWorkspace({ dir: '.agent/model-workspace' }),
        capabilities: [memory({ stores: { agent: {
          adapter: workspaceJsonlMemoryStore(),
          scope: ({ user }) => (user ? { agent: 'model', user: user.id } : undefined),
          write: { mode: 'tool', policy: 'require-approval' },
        } } })],
      })
      const user = { id: 'ann' }
      const first = await runAgent(agent, { input: 'remember that I drink green tea', user }).result
      const saved = await resolveApproval(agent, first.approvals[0].id, { approved: true, approver: 'ann', threadId: first.threadId, user }).result
      const asked = await runAgent(agent, { input: 'what do I drink?', user, threadId: first.threadId }).result
      console.log(JSON.stringify({
        first: first.status,
        saved: [saved.status, saved.text],
        asked: [asked.status, asked.text],
        searchResultSeen: JSON.stringify(model.prompts[3]).includes('I drink green tea'),
      }))
    `)
    const result = await ok('node', ['model-turn.mjs'], { cwd: app })
    expect(JSON.parse(result.stdout)).toEqual({ first: 'awaiting-approval', saved: ['completed', 'Saved.'], asked: ['completed', 'You drink green tea.'], searchResultSeen: true })
  })

  it('npx agent info describes the quick-start agent', async () => {
    const info = await ok('npx', ['--no-install', 'agent', 'info', '--agent', 'support'], { cwd: app })
    expect(info.stdout).toContain('agent: support')
    expect(info.stdout).toContain('driver: custom-run')
    expect(info.stdout).toContain('capabilities: memory')
    expect(info.stdout).toContain(`workspace: ${join(app, '.agent', 'workspace')}`)
  })

  it('the app holds one copy of ai, zod and @ai-sdk/provider, at the versions it installed', async () => {
    const found = JSON.parse((await ok('npm', ['query', '#ai, #zod, #@ai-sdk/provider', '--json'], { cwd: app })).stdout) as Array<{ name: string, version: string, location: string }>
    const copies = (name: string) => found.filter(node => node.name === name).map(node => `${node.location}@${node.version}`)
    expect(copies('ai')).toEqual([`node_modules/ai@${APP_VERSIONS.ai}`])
    expect(copies('zod')).toEqual([`node_modules/zod@${APP_VERSIONS.zod}`])
    expect(copies('@ai-sdk/provider')).toHaveLength(1)
  })

  it('without better-sqlite3, ioredis or pg installed, every entry imports and the SQLite and Postgres stores name the package to install', async () => {
    for (const name of ['better-sqlite3', 'ioredis', 'pg']) expect(existsSync(join(app, 'node_modules', name)), name).toBe(false)
    writeFileSync(join(app, 'optional.mjs'), `
      await import('vite-agent-memory')
      await import('vite-agent-memory/testing')
      await import('vite-agent-memory/server')
      const { postgresMemoryStore, sqliteMemoryStore } = await import('vite-agent-memory/capabilities')
      const stores = [sqliteMemoryStore({ file: 'memory.db' }), postgresMemoryStore({ connectionString: 'postgres://127.0.0.1:1/none' })]
      const outcomes = []
      for (const store of stores) {
        try { await store.exportLog(); outcomes.push('opened') }
        catch (error) { outcomes.push({ code: error.code, fix: error.fix }) }
      }
      console.log(JSON.stringify(outcomes))
    `)
    const result = await ok('node', ['optional.mjs'], { cwd: app })
    expect(JSON.parse(result.stdout)).toEqual([
      { code: 'DEPENDENCY_MISSING', fix: 'install it beside vite-agent-memory: npm install better-sqlite3@"^12.0.0"' },
      { code: 'DEPENDENCY_MISSING', fix: 'install it beside vite-agent-memory: npm install pg@"^8.0.0"' },
    ])
  })

  it('a CommonJS module loads every entry with import() and with require()', async () => {
    writeFileSync(join(app, 'entries.cjs'), `
      const entries = ['vite-agent-memory', 'vite-agent-memory/capabilities', 'vite-agent-memory/testing', 'vite-agent-memory/vite', 'vite-agent-memory/server']
      ;(async () => {
        const imported = await Promise.all(entries.map(entry => import(entry)))
        const required = entries.map(entry => require(entry))
        console.log(JSON.stringify({
          defineAgent: typeof imported[0].defineAgent,
          memory: typeof imported[1].memory,
          scriptedModel: typeof imported[2].scriptedModel,
          agentMemory: typeof imported[3].agentMemory,
          createAgentHandler: typeof imported[4].createAgentHandler,
          sameModules: required.every((module, index) => module.default === undefined && Object.keys(module).join() === Object.keys(imported[index]).join()),
        }))
      })()
    `)
    const result = await ok('node', ['entries.cjs'], { cwd: app })
    expect(JSON.parse(result.stdout)).toEqual({ defineAgent: 'function', memory: 'function', scriptedModel: 'function', agentMemory: 'function', createAgentHandler: 'function', sameModules: true })
  })

  describe('with vite, typescript, @types/node, @types/json-schema and crossws installed', () => {
    let vite: ReturnType<typeof spawn> | undefined

    beforeAll(async () => {
      // With the two type packages the README names for dependencies' own declarations (see the tsc test).
      await ok('npm', ['install', '--prefer-offline', '--save-dev', `vite@${APP_VERSIONS.vite}`, ...Object.entries(TOOL_VERSIONS).map(([name, version]) => `${name}@${version}`), '@types/json-schema@7', 'crossws@0.4'], { cwd: app, timeoutMs: 180_000 })
      writeFileSync(join(app, 'entries.ts'), [
        `import * as host from 'vite-agent-memory'`,
        `import * as capabilities from 'vite-agent-memory/capabilities'`,
        `import * as testing from 'vite-agent-memory/testing'`,
        `import * as plugin from 'vite-agent-memory/vite'`,
        `import * as server from 'vite-agent-memory/server'`,
        `import type { AgentDefinition, Workspace } from 'vite-agent-memory'`,
        `import type { MemoryRecord, SqliteMemoryStoreFactory } from 'vite-agent-memory/capabilities'`,
        `import type { ScriptedModel } from 'vite-agent-memory/testing'`,
        `import type { AgentMemoryPluginOptions } from 'vite-agent-memory/vite'`,
        `import type { AgentHandlerOptions } from 'vite-agent-memory/server'`,
        `export type Used = [AgentDefinition, Workspace, MemoryRecord, SqliteMemoryStoreFactory, ScriptedModel, AgentMemoryPluginOptions, AgentHandlerOptions]`,
        `export const entries = [host, capabilities, testing, plugin, server]`,
        '',
      ].join('\n'))
    }, 240_000)

    afterAll(() => {
      if (vite?.pid) {
        try {
          process.kill(-vite.pid, 'SIGTERM')
        }
        catch {}
      }
    })

    it('tsc with skipLibCheck false finds no error in our declarations: with the two type packages the README names, only h3\'s documented lib error is left', async () => {
      // The README's fix for the dependencies' own declarations, installed above: @types/json-schema (for
      // @ai-sdk/provider) and crossws (for h3); h3's `static override isError` also needs lib
      // ESNext.Error, left out here as a typical Vite app's lib (ES2022, DOM) leaves it out.
      writeFileSync(join(app, 'tsconfig.json'), JSON.stringify({
        compilerOptions: { target: 'ES2022', lib: ['ES2022', 'DOM'], module: 'ESNext', moduleResolution: 'bundler', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] },
        include: ['entries.ts', 'server', 'vite.config.ts'],
      }))
      const result = await run('npx', ['--no-install', 'tsc', '--noEmit', '-p', '.'], { cwd: app, timeoutMs: 180_000 })
      const errors = result.stdout.split('\n').filter(line => line.includes('error TS'))
      expect(errors).toEqual([expect.stringMatching(/^node_modules\/h3\/dist\/h3\.d\.mts\(\d+,\d+\): error TS4113: This member cannot have an 'override' modifier because it is not declared in the base class 'Error'\.$/)])
    }, 240_000)

    it('tsc under module nodenext (no bundler) type-checks the quick-start agent and every entry in the CommonJS app, as the README says', async () => {
      writeFileSync(join(app, 'tsconfig.nodenext.json'), JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'nodenext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
        include: ['entries.ts', 'server'],
      }))
      const result = await run('npx', ['--no-install', 'tsc', '--noEmit', '-p', 'tsconfig.nodenext.json'], { cwd: app, timeoutMs: 180_000 })
      expect(result.stdout.split('\n').filter(line => line.includes('error TS'))).toEqual([])
      expect(result.code).toBe(0)
    }, 240_000)

    it('tsc type-checks createWorkspace({ storage: createStorage() }) of docs/host.md and docs/workspace.md, made inline or first', async () => {
      // Its own run with skipLibCheck: unstorage's index declarations import every driver's peer (README).
      writeFileSync(join(app, 'storage-option.ts'), [
        `import { createStorage } from 'unstorage'`,
        `import { createWorkspace } from 'vite-agent-memory'`,
        `export const inline = createWorkspace({ storage: createStorage() })`,
        `const made = createStorage()`,
        `export const first = createWorkspace({ storage: made })`,
        '',
      ].join('\n'))
      writeFileSync(join(app, 'tsconfig.storage.json'), JSON.stringify({
        compilerOptions: { target: 'ES2022', lib: ['ES2022', 'DOM'], module: 'ESNext', moduleResolution: 'bundler', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] },
        include: ['storage-option.ts'],
      }))
      const result = await run('npx', ['--no-install', 'tsc', '--noEmit', '-p', 'tsconfig.storage.json'], { cwd: app, timeoutMs: 180_000 })
      expect(result.stdout.split('\n').filter(line => line.includes('error TS'))).toEqual([])
      expect(result.code).toBe(0)
    }, 240_000)

    it('the Vite plugin of the README serves the agent routes in the app\'s dev server', async () => {
      const port = await freePort()
      vite = spawn('npx', ['--no-install', 'vite', '--port', String(port), '--strictPort', '--host', '127.0.0.1'], { cwd: app, env: appEnv(), stdio: 'ignore', detached: true })
      const base = `http://127.0.0.1:${port}/__agents`
      let agents: unknown
      for (let attempt = 0; attempt < 240 && agents === undefined; attempt++) {
        agents = await fetch(`${base}/agents`).then(response => (response.ok ? response.json() : undefined), () => undefined)
        if (agents === undefined) await new Promise(resolve => setTimeout(resolve, 250))
      }
      expect(agents).toEqual({ agents: [expect.objectContaining({ name: 'support', capabilities: ['memory'] })] })
      // The record `agent dev` saved for the user demo (the plugin's first dev user), in the same workspace.
      const search = await (await fetch(`${base}/agents/support/stores/agent/search?q=window`)).json() as { hits: Array<{ record: { content: string } }> }
      expect(search.hits.map(hit => hit.record.content)).toEqual(['I prefer window seats'])
      const response = await fetch(`${base}/agents/support/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: 'window seats' }) })
      expect(response.headers.get('content-type')).toContain('application/x-ndjson')
      const events = (await response.text()).trim().split('\n').map(line => JSON.parse(line) as { type: string, status?: string, text?: string })
      expect(events.at(-1)).toMatchObject({ type: 'finish', status: 'completed', text: 'I remember: I prefer window seats' })
    }, 120_000)

    it('npx agent memory erase then leaves the fact in no file of the app\'s .agent folder: log, checkpoint, approvals and their decisions, transcripts, the studio\'s run journals', async () => {
      const fact = 'I prefer window seats'
      expect(filesHolding(join(app, '.agent'), fact)).toEqual(expect.arrayContaining([expect.stringMatching(/^workspace\/agents\/support\/studio\/threads\//)]))
      const erased = await ok('npx', ['--no-install', 'agent', 'memory', 'erase', '--agent', 'support', '--yes'], { cwd: app })
      expect(erased.stdout).toContain('erased 1 record of store agent, scope {"agent":"support","user":"demo"}')
      expect(erased.stdout).not.toContain('not the host\'s')
      expect(filesHolding(join(app, '.agent'), fact)).toEqual([])
    })
  })
})

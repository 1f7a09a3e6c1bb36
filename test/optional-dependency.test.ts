import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { OPTIONAL_DEPENDENCIES, importOptional, nativeAddonLoadError, requireOptional } from '../src/optional-dependency.ts'
import { isAgentError } from '../src/errors.ts'

const folders: string[] = []
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true })
})

/** A folder outside the repository: nothing resolves from it but what the test puts in its node_modules. */
function appFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'vam-optional-'))
  folders.push(dir)
  return dir
}

/** Installs a package whose entry throws the error a native module built for another Node version throws. */
function installBrokenNativeModule(dir: string, name: string): void {
  const folder = join(dir, 'node_modules', name)
  mkdirSync(folder, { recursive: true })
  writeFileSync(join(folder, 'package.json'), JSON.stringify({ name, version: '12.0.0', main: 'index.js' }))
  writeFileSync(join(folder, 'index.js'), `throw new Error('Could not locate the bindings file')\n`)
}

function caught(run: () => unknown): unknown {
  try {
    run()
  }
  catch (error) {
    return error
  }
  throw new Error('expected a throw')
}

describe('optional peer dependencies', () => {
  it('the supported ranges are the optional peerDependencies of package.json', () => {
    const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
      peerDependencies: Record<string, string>
      peerDependenciesMeta: Record<string, { optional?: boolean }>
      dependencies: Record<string, string>
    }
    for (const [name, range] of Object.entries(OPTIONAL_DEPENDENCIES)) {
      expect(manifest.peerDependencies[name], name).toBe(range)
      expect(manifest.peerDependenciesMeta[name]?.optional, name).toBe(true)
      expect(manifest.dependencies[name], name).toBeUndefined()
    }
  })

  it('a missing package is DEPENDENCY_MISSING naming the package, the feature and the install command', async () => {
    const from = pathToFileURL(join(appFolder(), 'server.mjs'))
    const error = await importOptional('pg', 'postgresMemoryStore()', { from }).catch(caught => caught as unknown)
    expect(isAgentError(error)).toBe(true)
    expect(error).toMatchObject({
      code: 'DEPENDENCY_MISSING',
      fix: 'install it beside vite-agent-memory: npm install pg@"^8.0.0"',
      details: { package: 'pg', range: '^8.0.0', feature: 'postgresMemoryStore()' },
    })
    expect((error as Error).message).toContain('postgresMemoryStore() needs the package "pg"')

    const sync = caught(() => requireOptional('better-sqlite3', 'sqliteMemoryStore()', { from }))
    expect(sync).toMatchObject({ code: 'DEPENDENCY_MISSING', details: { package: 'better-sqlite3', range: '^12.0.0' } })
  })

  it('an installed package that fails to load is DEPENDENCY_LOAD_FAILED with its own message and npm rebuild as the fix', async () => {
    const dir = appFolder()
    installBrokenNativeModule(dir, 'better-sqlite3')
    const from = pathToFileURL(join(dir, 'server.mjs'))
    const sync = caught(() => requireOptional('better-sqlite3', 'sqliteMemoryStore()', { from }))
    expect(sync).toMatchObject({ code: 'DEPENDENCY_LOAD_FAILED', details: { package: 'better-sqlite3' } })
    expect((sync as Error).message).toContain('Could not locate the bindings file')
    expect((sync as { fix: string }).fix).toContain('npm rebuild better-sqlite3')
    const loaded = await importOptional('better-sqlite3', 'sqliteMemoryStore()', { from }).catch(error => error as unknown)
    expect(loaded).toMatchObject({ code: 'DEPENDENCY_LOAD_FAILED', details: { package: 'better-sqlite3' } })
  })

  it('a native addon that was never built or does not load (better-sqlite3 loads it at the first connection) is DEPENDENCY_LOAD_FAILED with npm rebuild as the fix; other errors are not', () => {
    // The real errors: the `bindings` package better-sqlite3 uses, asked for an addon in a package folder with no build/, and Node's dlopen of a file that is no addon.
    const bindings = createRequire(createRequire(import.meta.url).resolve('better-sqlite3'))('bindings') as (options: { bindings: string; module_root: string }) => unknown
    const dir = appFolder()
    const unbuilt = caught(() => bindings({ bindings: 'better_sqlite3.node', module_root: dir }))
    writeFileSync(join(dir, 'broken.node'), 'not an addon')
    const unloadable = caught(() => process.dlopen({ exports: {} }, join(dir, 'broken.node')))
    for (const error of [unbuilt, unloadable]) {
      const mapped = nativeAddonLoadError('better-sqlite3', 'sqliteMemoryStore()', error)
      expect(mapped).toMatchObject({ code: 'DEPENDENCY_LOAD_FAILED', details: { package: 'better-sqlite3', feature: 'sqliteMemoryStore()' } })
      expect(mapped!.fix).toContain('npm rebuild better-sqlite3')
      expect(mapped!.message).toContain((error as Error).message.split('\n')[0])
    }
    expect(nativeAddonLoadError('better-sqlite3', 'sqliteMemoryStore()', Object.assign(new Error('unable to open database file'), { code: 'SQLITE_CANTOPEN' }))).toBeUndefined()
  })

  it('an installed package loads: import() gives its namespace, require its exports', async () => {
    const sqlite = await importOptional<{ default: unknown }>('better-sqlite3', 'sqliteMemoryStore()')
    const required = requireOptional('better-sqlite3', 'sqliteMemoryStore()')
    expect(typeof required).toBe('function')
    expect(sqlite.default).toBe(required)
  })
})

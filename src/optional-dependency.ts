/**
 * Optional peer dependencies: native modules and service clients that only one store or driver
 * needs (`better-sqlite3` for `sqliteMemoryStore()`, `pg` for the Postgres store, `ioredis` for
 * unstorage's Redis driver, `usearch` for the native exact vector scan of hybrid search). They are
 * loaded the first time their feature is used, never when an entry point is imported, so an app
 * installs only the ones it uses.
 *
 * Native and service clients are optional peer dependencies, loaded only when their store is
 * used, so an app pays only for the stores it uses; a missing one is an error that names the
 * package to install.
 */
import { createRequire } from 'node:module'
import { isAbsolute } from 'node:path'
import { pathToFileURL } from 'node:url'
import { agentError } from './errors.ts'

/**
 * Every optional peer dependency, with the version range the package supports (the same ranges
 * as `peerDependencies` in package.json; a test keeps them equal).
 */
export const OPTIONAL_DEPENDENCIES = {
  'better-sqlite3': '^12.0.0',
  'ioredis': '^5.4.2',
  'pg': '^8.0.0',
  'usearch': '^2.25.3',
} as const

/** The name of an optional peer dependency. */
export type OptionalDependency = keyof typeof OPTIONAL_DEPENDENCIES

/** Where a package is resolved from: this module by default (a file URL or path). */
interface ResolveFrom {
  from?: string | URL
}

/**
 * Loads an optional dependency with `import()`, the first time `feature` needs it.
 *
 * @param name the package, one of {@link OPTIONAL_DEPENDENCIES}.
 * @param feature what needs it, in the words of the API (`'sqliteMemoryStore()'`), for the error.
 * @returns the module namespace (a CommonJS package's `module.exports` is its `default`).
 * @throws AgentError `DEPENDENCY_MISSING` (details: `package`, `range`, `feature`) when the package
 * is not installed, with the `npm install` command as the fix; `DEPENDENCY_LOAD_FAILED` when it is
 * installed but fails to load (a native module built for another Node version, for example).
 */
export async function importOptional<T = Record<string, unknown>>(name: OptionalDependency, feature: string, options: ResolveFrom = {}): Promise<T> {
  const resolved = resolveOptional(name, feature, createRequire(options.from ?? import.meta.url))
  try {
    return (await import(/* @vite-ignore */ isAbsolute(resolved) ? pathToFileURL(resolved).href : resolved)) as T
  }
  catch (error) {
    throw loadError(name, feature, error)
  }
}

/**
 * Loads an optional CommonJS dependency synchronously with `require`, for code paths that cannot
 * await (opening a SQLite connection inside a synchronous getter). Same errors as
 * {@link importOptional}; returns `module.exports`.
 */
export function requireOptional<T = unknown>(name: OptionalDependency, feature: string, options: ResolveFrom = {}): T {
  const require = createRequire(options.from ?? import.meta.url)
  const resolved = resolveOptional(name, feature, require)
  try {
    return require(resolved) as T
  }
  catch (error) {
    throw loadError(name, feature, error)
  }
}

/** What Node and the `bindings` package say when a native addon is absent or cannot be loaded. */
const NATIVE_ADDON_FAILURE = /Could not locate the bindings file|NODE_MODULE_VERSION|invalid ELF header|wrong ELF class|cannot open shared object file|not a valid Win32 application/

/**
 * `DEPENDENCY_LOAD_FAILED` for an error that a native addon of `name` failed to load, else
 * `undefined`. better-sqlite3 loads its addon when the first connection is made, not when the
 * package is required, so the store's open passes its error here: an addon never built (its
 * install script did not run: `npm install --ignore-scripts`, or install scripts not allowed) or
 * built for another Node version gets the rebuild command, not advice about the database file.
 */
export function nativeAddonLoadError(name: OptionalDependency, feature: string, error: unknown): ReturnType<typeof agentError> | undefined {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as { code?: unknown } | null | undefined)?.code
  return code === 'ERR_DLOPEN_FAILED' || NATIVE_ADDON_FAILURE.test(message) ? loadError(name, feature, error) : undefined
}

/** What needs each optional dependency when an app's own module imports it (the Redis driver of unstorage imports ioredis). */
const IMPORTED_BY: Record<OptionalDependency, string> = {
  'better-sqlite3': 'the module',
  'ioredis': 'unstorage\'s Redis driver (unstorage/drivers/redis)',
  'pg': 'the module',
  'usearch': 'the module',
}

/**
 * `DEPENDENCY_MISSING` when `error` is Node's "Cannot find package 'X'" (or module) for an
 * optional peer dependency X that a module imported statically, such as unstorage's Redis driver
 * importing `ioredis` in an agent module; else `undefined`. Loading such a module fails before
 * any code of this package runs, so the loaders of agent modules (the CLI, the Vite plugin) pass
 * their error here to name the install command.
 */
export function missingOptionalDependencyOf(error: unknown): ReturnType<typeof agentError> | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined
  const message = error instanceof Error ? error.message : String(error)
  const name = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1]
  if (name === undefined || !Object.hasOwn(OPTIONAL_DEPENDENCIES, name)) return undefined
  return missingError(name as OptionalDependency, IMPORTED_BY[name as OptionalDependency], error)
}

/** The entry file of the package, or `DEPENDENCY_MISSING` when it is not installed. */
function resolveOptional(name: OptionalDependency, feature: string, require: NodeJS.Require): string {
  try {
    return require.resolve(name)
  }
  catch (error) {
    throw missingError(name, feature, error)
  }
}

function missingError(name: OptionalDependency, feature: string, cause: unknown) {
  const range = OPTIONAL_DEPENDENCIES[name]
  return agentError(
    'DEPENDENCY_MISSING',
    `${feature} needs the package "${name}", an optional peer dependency of vite-agent-memory that is not installed in this app`,
    `install it beside vite-agent-memory: npm install ${name}@"${range}"`,
    { package: name, range, feature },
    cause,
  )
}

function loadError(name: OptionalDependency, feature: string, cause: unknown) {
  const message = cause instanceof Error ? cause.message : String(cause)
  return agentError(
    'DEPENDENCY_LOAD_FAILED',
    `${feature} needs the package "${name}", which is installed but failed to load: ${message}`,
    `rebuild it for this Node version with its install script allowed to run (npm rebuild ${name}; an install with --ignore-scripts, or whose install scripts were not allowed, builds no native addon), at a version in "${OPTIONAL_DEPENDENCIES[name]}"`,
    { package: name, range: OPTIONAL_DEPENDENCIES[name], feature },
    cause,
  )
}

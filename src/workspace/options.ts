/**
 * The check of `createWorkspace(options)`: a misspelled key (`{ directory: 'var/agent' }`) or a
 * value of the wrong type is an error, never a workspace in the default folder.
 */
import { agentError } from '../errors.ts'
import type { WorkspaceOptions } from './types.ts'

const KEYS = ['storage', 'dir', 'writable'] as const

function invalid(why: string, details?: Record<string, unknown>): never {
  throw agentError('WORKSPACE_OPTIONS_INVALID', why, 'pass createWorkspace() alone (fs driver in ./.agent/workspace), { dir: "<folder>" } for the fs driver elsewhere, or { storage } for any unstorage Storage; add writable: false for a read-only workspace', details)
}

/**
 * Validates `createWorkspace()` options: only `storage`, `dir` and `writable`; `dir` a non-empty
 * string, `writable` a boolean, `storage` an unstorage `Storage` (it has `getItem` and
 * `getMount`), and not both `dir` and `storage` (`dir` is the folder of the default fs driver,
 * which `storage` replaces).
 *
 * @throws `WORKSPACE_OPTIONS_INVALID` naming the key and what it must be.
 */
export function checkWorkspaceOptions(options: unknown): asserts options is WorkspaceOptions {
  if (options === undefined) return
  if (options === null || typeof options !== 'object' || Array.isArray(options)) invalid(`createWorkspace() takes an options object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`)
  const given = options as Record<string, unknown>
  const unknown = Object.keys(given).filter(key => !(KEYS as readonly string[]).includes(key))
  if (unknown.length) invalid(`createWorkspace() got unknown option ${unknown.map(key => `"${key}"`).join(', ')} (the options are ${KEYS.join(', ')})`, { options: unknown })
  if (given.dir !== undefined && (typeof given.dir !== 'string' || given.dir === '')) invalid(`createWorkspace() option "dir" must be a non-empty folder path, got ${JSON.stringify(given.dir) ?? String(given.dir)}`)
  if (given.writable !== undefined && typeof given.writable !== 'boolean') invalid(`createWorkspace() option "writable" must be true or false, got ${JSON.stringify(given.writable) ?? String(given.writable)}`)
  if (given.storage !== undefined) {
    const storage = given.storage as { getItem?: unknown, getMount?: unknown } | null
    if (storage === null || typeof storage !== 'object' || typeof storage.getItem !== 'function' || typeof storage.getMount !== 'function') invalid('createWorkspace() option "storage" must be an unstorage Storage (createStorage({ driver }) from "unstorage"), not a driver or another object')
    if (given.dir !== undefined) invalid('createWorkspace() got both "dir" and "storage": "dir" is the folder of the default fs driver, which "storage" replaces; mount the fs driver with its base in your storage, or pass dir alone')
  }
}

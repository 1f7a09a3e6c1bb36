import { promises as fsp } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { createStorage, type Driver, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { agentError } from '../errors.ts'
import type { Workspace, WorkspaceOptions } from './types.ts'

/** Default folder of the fs-backed workspace, relative to `process.cwd()`. */
export const DEFAULT_WORKSPACE_DIR = '.agent/workspace'

/**
 * Creates the agent workspace over an unstorage `Storage`.
 *
 * Default: the unstorage fs driver rooted at `dir` (default `.agent/workspace` under
 * `process.cwd()`). Appends are native on the fs driver (`O_APPEND` on the driver's file) and the
 * memory driver (its instance); any other driver falls back to a read-modify-write guarded by a
 * per-key lock in this process (documented in docs/workspace.md).
 *
 * @throws `WORKSPACE_KEY_INVALID` from any method given an empty key or one with `..` segments.
 * @throws `WORKSPACE_READ_ONLY` from write methods when `writable: false`.
 */
export function createWorkspace(options: WorkspaceOptions = {}): Workspace {
  const dir = options.storage ? undefined : resolve(options.dir ?? DEFAULT_WORKSPACE_DIR)
  const storage = options.storage ?? createStorage({ driver: fsDriver({ base: dir! }) })
  const writable = options.writable ?? true
  const nativeFor = (key: string): NativeText | undefined => nativeText(storage, key)
  const lockId = (key: string) => nativeFor(key)?.id ?? `storage#${instanceId(storage)}:${key}`

  function requireWritable(operation: string, key: string) {
    if (!writable) {
      throw agentError('WORKSPACE_READ_ONLY', `the workspace is read-only, so "${operation}" of "${key}" was refused`, 'create the workspace with `writable: true` (the default) for agents that write')
    }
  }

  async function withLock<T>(key: string, task: () => Promise<T>): Promise<T> {
    const id = lockId(checkKey(key))
    const previous = locks.get(id) ?? Promise.resolve()
    let release!: () => void
    const current = new Promise<void>((done) => { release = done })
    const chained = previous.then(() => current)
    locks.set(id, chained)
    await previous
    try {
      return await task()
    }
    finally {
      release()
      if (locks.get(id) === chained) locks.delete(id)
    }
  }

  async function readText(key: string): Promise<string | undefined> {
    key = checkKey(key)
    const native = nativeFor(key)
    if (native) return native.read()
    const raw: unknown = await storage.getItemRaw(key)
    return rawToText(raw)
  }

  return {
    storage,
    dir,
    writable,
    readText,
    async readJson<T>(key: string): Promise<T | undefined> {
      const text = await readText(key)
      if (text === undefined) return undefined
      try {
        return JSON.parse(text) as T
      }
      catch (error) {
        throw agentError('WORKSPACE_CORRUPT_JSON', `the workspace value "${key}" is not valid JSON`, 'restore the file from a backup or remove it', { key }, error)
      }
    },
    async writeJson(key, value) {
      key = checkKey(key)
      requireWritable('writeJson', key)
      const text = `${JSON.stringify(value, null, 2)}\n`
      const native = nativeFor(key)
      if (native) return native.write(text)
      await storage.setItem(key, text)
    },
    async append(key, text) {
      key = checkKey(key)
      requireWritable('append', key)
      await withLock(key, async () => {
        const native = nativeFor(key)
        if (native) return native.append(text)
        // Fallback for drivers without a native append: guarded read-modify-write.
        const current = rawToText(await storage.getItemRaw(key)) ?? ''
        await storage.setItem(key, current + text)
      })
    },
    async truncate(key, length) {
      key = checkKey(key)
      requireWritable('truncate', key)
      const native = nativeFor(key)
      if (native) return native.truncate(length)
      const current = rawToText(await storage.getItemRaw(key)) ?? ''
      await storage.setItem(key, Buffer.from(current, 'utf8').subarray(0, length).toString('utf8'))
    },
    async remove(key) {
      key = checkKey(key)
      requireWritable('remove', key)
      await storage.removeItem(key)
    },
    async has(key) {
      return storage.hasItem(checkKey(key))
    },
    async keys(prefix) {
      return storage.getKeys(prefix)
    },
    withLock,
  }
}

/** Direct text access for drivers whose storage we can reach natively. */
interface NativeText {
  /** Identity of the underlying value across workspace objects in this process (for locks). */
  id: string
  read(): Promise<string | undefined>
  write(text: string): Promise<void>
  append(text: string): Promise<void>
  truncate(length: number): Promise<void>
}

function nativeText(storage: Storage, key: string): NativeText | undefined {
  const { base, driver } = storage.getMount(key)
  const relativeKey = key.slice(base.length)
  const name = (driver as Driver).name
  if ((name === 'fs' || name === 'fs-lite') && typeof driver.options?.base === 'string') {
    const file = join(resolve(driver.options.base), relativeKey.replace(/:/g, '/'))
    return {
      id: `fs:${file}`,
      async read() {
        return fsp.readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
          if (error.code === 'ENOENT') return undefined
          throw agentError('WORKSPACE_READ_FAILED', `reading "${key}" failed (${error.code ?? error.message})`, 'check the workspace folder permissions and disk', { key }, error)
        })
      },
      async write(text) {
        await fsp.mkdir(dirname(file), { recursive: true })
        // Write a sibling then rename, so a crash never leaves half a JSON value.
        const temporary = `${file}.${process.pid}.${Date.now()}.tmp`
        await fsp.writeFile(temporary, text, 'utf8')
        await fsp.rename(temporary, file)
      },
      async append(text) {
        await fsp.mkdir(dirname(file), { recursive: true })
        await fsp.appendFile(file, text, { encoding: 'utf8', flag: 'a' })
      },
      async truncate(length) {
        await fsp.truncate(file, length)
      },
    }
  }
  if (name === 'memory' && typeof driver.getInstance === 'function') {
    const map = driver.getInstance() as Map<string, unknown>
    return {
      id: `memory:${instanceId(map)}:${relativeKey}`,
      async read() {
        return rawToText(map.get(relativeKey))
      },
      async write(text) {
        map.set(relativeKey, text)
      },
      async append(text) {
        map.set(relativeKey, (rawToText(map.get(relativeKey)) ?? '') + text)
      },
      async truncate(length) {
        const current = rawToText(map.get(relativeKey)) ?? ''
        map.set(relativeKey, Buffer.from(current, 'utf8').subarray(0, length).toString('utf8'))
      },
    }
  }
  return undefined
}

const instanceIds = new WeakMap<object, number>()
let nextInstanceId = 0
function instanceId(value: object): number {
  let id = instanceIds.get(value)
  if (id === undefined) {
    id = ++nextInstanceId
    instanceIds.set(value, id)
  }
  return id
}

// Locks are shared by every workspace object of this process that reaches the same value, so two
// workspaces over one folder (an agent and the CLI, say) still serialize their appends.
const locks = new Map<string, Promise<unknown>>()

function rawToText(raw: unknown): string | undefined {
  if (raw === null || raw === undefined) return undefined
  if (typeof raw === 'string') return raw
  if (raw instanceof Uint8Array) return Buffer.from(raw).toString('utf8')
  if (raw instanceof ArrayBuffer) return Buffer.from(raw).toString('utf8')
  return JSON.stringify(raw)
}

function checkKey(key: string): string {
  const normalized = key.replace(/[/\\]/g, ':').replace(/:+/g, ':').replace(/^:|:$/g, '')
  if (!normalized || normalized.split(':').some(segment => segment === '.' || segment === '..')) {
    throw agentError('WORKSPACE_KEY_INVALID', `the workspace key ${JSON.stringify(key)} is empty or has "." or ".." segments`, 'use a relative key such as "memory/memory.jsonl"', { key })
  }
  return normalized
}

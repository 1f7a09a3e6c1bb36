import { appendFileSync, closeSync, fstatSync, fsyncSync, mkdirSync, openSync, promises as fsp, readSync, renameSync, statSync, truncateSync, writeFileSync, writeSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { createStorage, type Driver, type Storage } from 'unstorage'
import fsDriver from 'unstorage/drivers/fs'
import { agentError } from '../errors.ts'
import { checkWorkspaceOptions } from './options.ts'
import { dropLease, type FileLease, forgetKnownSize, isLeasedFile, noteLeasedStat, RETAKE, withFileLease, withFileLeaseNow } from './file-lease.ts'
import type { Workspace, WorkspaceOptions, WorkspaceReplaceWithOptions, WorkspaceValueStat, WorkspaceWriteOptions } from './types.ts'

import { DEFAULT_WORKSPACE_DIR } from './defaults.ts'

export { DEFAULT_WORKSPACE_DIR }

/**
 * Creates the agent workspace over an unstorage `Storage`.
 *
 * Default: the unstorage fs driver rooted at `dir` (default `.agent/workspace` under
 * `process.cwd()`). Appends are native on the fs driver (`O_APPEND` on the driver's file), the
 * memory driver (its instance) and the Redis driver (`APPEND` on its ioredis client); conditional
 * writes (`ifSize`) are atomic across processes on fs (a kernel byte-range lock, see
 * `file-lease.ts`) and across clients on
 * Redis (Lua). Any other driver falls back to a read-modify-write guarded by a per-key lock in
 * this process (documented in docs/workspace.md), so an append never rewrites the value it extends.
 *
 * @throws `WORKSPACE_OPTIONS_INVALID` for an unknown option key, a `dir` that is not a non-empty
 *   string, a `writable` that is not a boolean, a `storage` that is not an unstorage `Storage`, or
 *   both `dir` and `storage`.
 * @throws `WORKSPACE_KEY_INVALID` from any method given an empty key or one with `..` segments.
 * @throws `WORKSPACE_READ_ONLY` from write methods when `writable: false`.
 */
export function createWorkspace(options: WorkspaceOptions = {}): Workspace {
  checkWorkspaceOptions(options)
  const dir = options.storage ? undefined : resolve(options.dir ?? DEFAULT_WORKSPACE_DIR)
  const storage = (options.storage as Storage | undefined) ?? createStorage({ driver: fsDriver({ base: dir! }) })
  const writable = options.writable ?? true
  // One native accessor per key: resolving the mount and the file path costs more than an append.
  // Mounts are read when a key is first used (mount drivers before using the workspace).
  const natives = new Map<string, NativeText | null>()
  const nativeFor = (key: string): NativeText | undefined => {
    let native = natives.get(key)
    if (native === undefined) {
      if (natives.size >= MAX_CACHED_KEYS) natives.clear()
      natives.set(key, native = nativeText(storage, key) ?? null)
    }
    return native ?? undefined
  }
  const lockId = (key: string) => nativeFor(key)?.id ?? `storage#${instanceId(storage)}:${key}`

  function requireWritable(operation: string, key: string) {
    if (!writable) {
      throw agentError('WORKSPACE_READ_ONLY', `the workspace is read-only, so "${operation}" of "${key}" was refused`, 'create the workspace with `writable: true` (the default) for agents that write')
    }
  }

  const lockOf = (key: string): KeyLock => {
    const id = lockId(checkKey(key))
    let lock = locks.get(id)
    if (!lock) {
      if (locks.size >= MAX_CACHED_KEYS) for (const [known, free] of locks) if (!free.held) locks.delete(known)
      locks.set(id, lock = keyLock())
    }
    return lock
  }

  async function withLock<T>(key: string, task: () => Promise<T>): Promise<T> {
    const lock = lockOf(key)
    // Uncontended (the common case): no promise made, no turn to wait for. Else in call order:
    // the holder hands the lock to the first waiter (it stays held in between).
    if (lock.held) {
      const queue = lock.waiting
      await new Promise<void>(resume => queue.push(resume))
    }
    lock.held = true
    try {
      return await task()
    }
    finally {
      lock.release()
    }
  }

  function lockNow(key: string): (() => void) | undefined {
    const lock = lockOf(key)
    if (lock.held) return undefined
    lock.held = true
    return lock.release
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
    append(key, text, options = {}) {
      // Native appends are atomic on their own (fs: a synchronous check and write under the
      // lease; memory: synchronous; Redis: one command or Lua script): unless another write of
      // this key is queued (call order is kept), no lock, and their promise is returned as is.
      let native: NativeText | undefined
      try {
        key = checkKey(key)
        requireWritable('append', key)
        native = nativeFor(key)
      }
      catch (error) {
        return Promise.reject(error)
      }
      if (native && !locks.get(native.id)?.held) return native.append(text, options)
      return withLock(key, async () => {
        if (native) return native.append(text, options)
        // Fallback for drivers without a native append: guarded read-modify-write (this process only).
        const current = rawToText(await storage.getItemRaw(key)) ?? ''
        if (options.ifSize !== undefined && Buffer.byteLength(current, 'utf8') !== options.ifSize) return false
        await storage.setItem(key, current + text)
        return true
      })
    },
    appendNow(key, text, options) {
      if (options.ifSize === undefined) return undefined
      key = checkKey(key)
      requireWritable('append', key)
      const native = nativeFor(key)
      // Another write of this key queued in this process goes first (call order is kept).
      if (!native?.appendNow || locks.get(native.id)?.held) return undefined
      return native.appendNow(text, options)
    },
    async truncate(key, length, options = {}) {
      key = checkKey(key)
      requireWritable('truncate', key)
      return withLock(key, async () => {
        const native = nativeFor(key)
        if (native) return native.truncate(length, options)
        const current = Buffer.from(rawToText(await storage.getItemRaw(key)) ?? '', 'utf8')
        if (options.ifSize !== undefined && current.length !== options.ifSize) return false
        await storage.setItem(key, current.subarray(0, length).toString('utf8'))
        return true
      })
    },
    async replace(key, text, options = {}) {
      key = checkKey(key)
      requireWritable('replace', key)
      if (options.ifSizeOf) {
        const guardKey = checkKey(options.ifSizeOf.key)
        const size = options.ifSizeOf.size
        return withLock(key, async () => {
          const native = nativeFor(key)
          const guard = nativeFor(guardKey)
          if (native?.replaceIfSizeOf && guard) {
            const done = await native.replaceIfSizeOf(text, guard, size, options)
            if (done !== undefined) return done
          }
          // Memory and other drivers: one process owns the values, and the caller holds its lock of the guard key.
          const guardSize = guard ? (await guard.stat())?.size ?? 0 : Buffer.byteLength(rawToText(await storage.getItemRaw(guardKey)) ?? '', 'utf8')
          if (guardSize !== size) return false
          if (native) return native.replace(text, { ...options, ifSize: undefined })
          await storage.setItem(key, text)
          return true
        })
      }
      return withLock(key, async () => {
        const native = nativeFor(key)
        if (native) return native.replace(text, options)
        const current = rawToText(await storage.getItemRaw(key)) ?? ''
        if (options.ifSize !== undefined && Buffer.byteLength(current, 'utf8') !== options.ifSize) return false
        await storage.setItem(key, text)
        return true
      })
    },
    async replaceBytes(key, bytes, options) {
      key = checkKey(key)
      requireWritable('replace', key)
      const guardKey = checkKey(options.ifSizeOf.key)
      return withLock(key, async () => {
        const native = nativeFor(key)
        const guard = nativeFor(guardKey)
        // Bytes are kept as they are in a file only: the other drivers hold text.
        if (native?.file === undefined || !native.replaceIfSizeOf || !guard) return undefined
        return native.replaceIfSizeOf(bytes, guard, options.ifSizeOf.size, options)
      })
    },
    async replaceWith(key, source, options = {}) {
      key = checkKey(key)
      source = checkKey(source)
      requireWritable('replace', key)
      return withLock(key, async () => {
        const native = nativeFor(key)
        const from = nativeFor(source)
        if (native?.replaceWith && from) {
          const done = await native.replaceWith(from, options)
          if (done !== undefined) return done
        }
        // Other drivers: a copy and a removal, guarded in this process only.
        const text = rawToText(await storage.getItemRaw(source))
        if (text === undefined || (options.sourceSize !== undefined && Buffer.byteLength(text, 'utf8') !== options.sourceSize)) return false
        const current = rawToText(await storage.getItemRaw(key)) ?? ''
        if (options.ifSize !== undefined && Buffer.byteLength(current, 'utf8') !== options.ifSize) return false
        await storage.setItem(key, text)
        await storage.removeItem(source)
        return true
      })
    },
    stat(key) {
      let native: NativeText | undefined
      try {
        key = checkKey(key)
        native = nativeFor(key)
      }
      catch (error) {
        return Promise.reject(error)
      }
      if (native) return native.stat()
      return storage.getItemRaw(key).then((raw) => {
        const text = rawToText(raw)
        return text === undefined ? undefined : { size: Buffer.byteLength(text, 'utf8') }
      })
    },
    statNow(key) {
      const native = nativeFor(checkKey(key))
      return native?.statNow ? native.statNow() : false
    },
    async readBytes(key, start = 0, end) {
      key = checkKey(key)
      const native = nativeFor(key)
      if (native) return native.readBytes(start, end)
      const text = rawToText(await storage.getItemRaw(key))
      return text === undefined ? undefined : Buffer.from(text, 'utf8').subarray(start, end)
    },
    async remove(key) {
      key = checkKey(key)
      requireWritable('remove', key)
      const file = nativeFor(key)?.file
      if (file) forgetKnownSize(file)
      await storage.removeItem(key)
    },
    async has(key) {
      return storage.hasItem(checkKey(key))
    },
    async keys(prefix) {
      return storage.getKeys(prefix)
    },
    withLock,
    lockNow,
  }
}

/** Direct text access for drivers whose storage we can reach natively. */
interface NativeText {
  /** Identity of the underlying value across workspace objects in this process (for locks). */
  id: string
  read(): Promise<string | undefined>
  write(text: string): Promise<void>
  append(text: string, options: WorkspaceWriteOptions): Promise<boolean>
  /** A conditional append in this turn, or `undefined` when it cannot be done without waiting (see `Workspace.appendNow`). */
  appendNow?(text: string, options: WorkspaceWriteOptions): boolean | undefined
  truncate(length: number, options: WorkspaceWriteOptions): Promise<boolean>
  replace(text: string, options: WorkspaceWriteOptions): Promise<boolean>
  /** Replaces this value only when `guard` is `size` bytes long, atomically against `guard`'s writers; `undefined` when this pair of drivers cannot (the caller then checks in process). Bytes (a `Uint8Array`) only on fs. */
  replaceIfSizeOf?(text: string | Uint8Array, guard: NativeText, size: number, options: WorkspaceWriteOptions): Promise<boolean | undefined>
  /** Moves `source`'s value over this one (see `Workspace.replaceWith`); `undefined` when this pair of drivers cannot (the caller then copies in process). */
  replaceWith?(source: NativeText, options: WorkspaceReplaceWithOptions): Promise<boolean | undefined>
  /** fs: the file; Redis: the client and key (for {@link NativeText.replaceIfSizeOf}). */
  file?: string
  redis?: { client: RedisClient; key: string }
  /** memory: the driver's map, this key's cached value and its removal (for {@link NativeText.replaceWith}). */
  memory?: { map: Map<string, unknown>; cache(): { text: string; bytes: number } | undefined; drop(): void }
  stat(): Promise<WorkspaceValueStat | undefined>
  /** {@link NativeText.stat} in the same turn, for drivers that need no I/O wait for it (fs, memory). */
  statNow?(): WorkspaceValueStat | undefined
  /** Bytes from `start` to `end` (exclusive; default: the end of the value). */
  readBytes(start: number, end?: number): Promise<Uint8Array | undefined>
}

function nativeText(storage: Storage, key: string): NativeText | undefined {
  const { base, driver } = storage.getMount(key)
  const relativeKey = key.slice(base.length)
  const name = (driver as Driver).name
  if ((name === 'fs' || name === 'fs-lite') && typeof driver.options?.base === 'string') {
    return fsText(key, join(resolve(driver.options.base), relativeKey.replace(/:/g, '/')))
  }
  if (name === 'memory' && typeof driver.getInstance === 'function') {
    return memoryText(driver.getInstance() as Map<string, unknown>, relativeKey)
  }
  if (name === 'redis' && typeof driver.getInstance === 'function') {
    const prefix = String((driver.options as { base?: string } | undefined)?.base ?? '').replace(/:$/, '')
    return redisText(driver.getInstance() as RedisClient, prefix ? `${prefix}:${relativeKey}` : relativeKey)
  }
  return undefined
}

function fsText(key: string, file: string): NativeText {
  // The identity text of the file last seen (the same file from stat to stat: one string, not one per stat).
  let identity = { dev: -1, ino: -1, id: '' }
  const readFailed = (error: NodeJS.ErrnoException) => agentError('WORKSPACE_READ_FAILED', `reading "${key}" failed (${error.code ?? error.message})`, 'check the workspace folder permissions and disk', { key }, error)
  const sizeNow = (): number => {
    try {
      return statSync(file).size
    }
    catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0
      throw readFailed(error as NodeJS.ErrnoException)
    }
  }
  // The size of `leased` (the file `lease` is held on): the stat kept under the lease, else one
  // now. When the path names another file than the locked one, or none (replaced or removed by a
  // writer that took no lease), that lock guards nothing: the lease is dropped and RETAKE returned,
  // so the task runs again under the lock of the file the path names.
  const leasedSize = (lease: FileLease, leased: string): number | typeof RETAKE => {
    let stats: { size: number; dev: number; ino: number } | undefined = lease.checked
    if (!stats) {
      try {
        stats = statSync(leased)
      }
      catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw readFailed(error as NodeJS.ErrnoException)
      }
    }
    if (!isLeasedFile(lease, stats)) {
      dropLease(lease)
      return RETAKE
    }
    return stats!.size
  }
  // Small synchronous calls: a stat or an append of one line costs microseconds, less than a
  // trip through libuv's thread pool, and keeps a check-then-write free of interleaving.
  const guarded = <T>(options: WorkspaceWriteOptions, task: (lease: FileLease) => T, otherwise: T) => withFileLease(file, (lease) => {
    lease.checked = undefined
    if (options.ifSize !== undefined && sizeNow() !== options.ifSize) return otherwise
    return task(lease)
  })
  return {
    id: `fs:${file}`,
    async read() {
      return fsp.readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') return undefined
        throw readFailed(error)
      })
    },
    async write(text) {
      forgetKnownSize(file)
      await fsp.mkdir(dirname(file), { recursive: true })
      // Write a sibling then rename, so a crash never leaves half a JSON value.
      const temporary = `${file}.${process.pid}.${Date.now()}.tmp`
      await fsp.writeFile(temporary, text, 'utf8')
      await fsp.rename(temporary, file)
    },
    append(text, options) {
      try {
        ensureFolder(file)
        // An unconditional append needs no lock: O_APPEND places each write at the end.
        if (options.ifSize === undefined) {
          appendUnconditionally(text, options.fsync === true)
          return Promise.resolve(true)
        }
      }
      catch (error) {
        return Promise.reject(error)
      }
      // A conditional append, under the lease.
      return withFileLease(file, lease => appendLeased(lease, text, options))
    },
    appendNow(text, options) {
      ensureFolder(file)
      return withFileLeaseNow(file, lease => appendLeased(lease, text, options))
    },
    async truncate(length, options) {
      return guarded(options, () => {
        truncateSync(file, length)
        return true
      }, false)
    },
    file,
    async replaceIfSizeOf(text, guard, size, options) {
      if (guard.file === undefined) return undefined
      ensureFolder(file)
      const guardFile = guard.file
      // Under the guard file's lease: no writer of that file can change its size meanwhile.
      // The guard is not written: a stat kept under its lease stays true for its next append.
      return withFileLease(guardFile, (lease) => {
        const guardSize = leasedSize(lease, guardFile)
        if (guardSize === RETAKE) return RETAKE
        if (guardSize !== size) return false
        replaceFile(file, text, options.fsync === true)
        return true
      })
    },
    async replaceWith(source, options) {
      if (source.file === undefined) return undefined
      const sourceFile = source.file
      ensureFolder(file)
      return guarded(options, (lease) => {
        let sourceBytes: number
        try {
          sourceBytes = statSync(sourceFile).size
        }
        catch (error) {
          if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false
          throw readFailed(error as NodeJS.ErrnoException)
        }
        if (options.sourceSize !== undefined && sourceBytes !== options.sourceSize) return false
        forgetKnownSize(sourceFile)
        renameOver(sourceFile, file, options.fsync === true)
        // The path names the new file now: the lock of the old one must not outlive this write.
        dropLease(lease)
        return true
      }, false)
    },
    async replace(text, options) {
      ensureFolder(file)
      return guarded(options, (lease) => {
        replaceFile(file, text, options.fsync === true)
        // The path names the new file now: the lock of the old one must not outlive this write.
        dropLease(lease)
        return true
      }, false)
    },
    stat() {
      try {
        return Promise.resolve(statNow())
      }
      catch (error) {
        return Promise.reject(error)
      }
    },
    statNow,
    async readBytes(start, end) {
      return readBytesNow(start, end)
    },
  }

  // The conditional append under the lease: the file's size and identity come from the stat
  // made when the lease was taken or since its last write (the writer's look before it builds
  // the line), or from one stat now; the line goes through the lease's kept O_APPEND descriptor,
  // the one the lock is held through, so no open/close per write.
  function appendLeased(lease: FileLease, text: string, options: WorkspaceWriteOptions): boolean | typeof RETAKE {
    const size = leasedSize(lease, file)
    // The kept stat is used up: this write changes the size.
    lease.checked = undefined
    if (size === RETAKE) return RETAKE
    if (size !== options.ifSize) return false
    writeSync(lease.fd!, text, null, 'utf8')
    if (options.fsync) fsyncSync(lease.fd!)
    return true
  }

  function appendUnconditionally(text: string, fsync: boolean): void {
    forgetKnownSize(file)
    if (!fsync) {
      appendFileSync(file, text, { encoding: 'utf8', flag: 'a' })
      return
    }
    const fd = openSync(file, 'a')
    try {
      writeSync(fd, text, null, 'utf8')
      fsyncSync(fd)
    }
    finally {
      closeSync(fd)
    }
  }

  function statNow(): WorkspaceValueStat | undefined {
    try {
      const stats = statSync(file)
      // Under this process's lease no cooperating writer can change the file until it is
      // released: the next conditional append of this lease trusts this stat instead of its own.
      noteLeasedStat(file, stats)
      if (stats.dev !== identity.dev || stats.ino !== identity.ino) identity = { dev: stats.dev, ino: stats.ino, id: `${stats.dev}:${stats.ino}` }
      return { size: stats.size, id: identity.id }
    }
    catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw readFailed(error as NodeJS.ErrnoException)
    }
  }

  function readBytesNow(start: number, end?: number): Uint8Array | undefined {
    let fd: number
    try {
      fd = openSync(file, 'r')
    }
    catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
      throw readFailed(error as NodeJS.ErrnoException)
    }
    try {
      const size = Math.min(fstatSync(fd).size, end ?? Number.POSITIVE_INFINITY)
      if (start >= size) return new Uint8Array(0)
      const buffer = Buffer.allocUnsafe(size - start)
      let filled = 0
      while (filled < buffer.length) {
        const read = readSync(fd, buffer, filled, buffer.length - filled, start + filled)
        if (read === 0) break
        filled += read
      }
      return buffer.subarray(0, filled)
    }
    catch (error) {
      throw readFailed(error as NodeJS.ErrnoException)
    }
    finally {
      closeSync(fd)
    }
  }
}

/** Writes `text` (UTF-8) or bytes to a sibling file and renames it over `file` (a crash leaves the old or the new value). */
function replaceFile(file: string, text: string | Uint8Array, fsync: boolean): void {
  const temporary = `${file}.${process.pid}.${Date.now()}.tmp`
  if (typeof text === 'string') writeFileSync(temporary, text, 'utf8')
  else writeFileSync(temporary, text)
  renameOver(temporary, file, fsync)
}

/** Renames `from` over `to` (atomic on one file system: a crash leaves the old file or the new one), after an `fsync` of `from` when asked. */
function renameOver(from: string, to: string, fsync: boolean): void {
  forgetKnownSize(to)
  if (fsync) {
    const fd = openSync(from, 'r+')
    try {
      fsyncSync(fd)
    }
    finally {
      closeSync(fd)
    }
  }
  renameSync(from, to)
}

/** Files whose folder this process has made (or found) already. */
const folders = new Set<string>()
function ensureFolder(file: string): void {
  if (folders.has(file)) return
  mkdirSync(dirname(file), { recursive: true })
  if (folders.size >= 4096) folders.clear()
  folders.add(file)
}

function memoryText(map: Map<string, unknown>, relativeKey: string): NativeText {
  // The value stays a plain string in the driver's Map (what getItem returns); its byte size and
  // the char offset of each append boundary are cached so that tailing never re-encodes it.
  const cache = (): MemoryTextCache | undefined => {
    const raw = map.get(relativeKey)
    if (raw === undefined || raw === null) return undefined
    let byKey = memoryCaches.get(map)
    if (!byKey) memoryCaches.set(map, byKey = new Map())
    let entry = byKey.get(relativeKey)
    if (!entry || entry.text !== raw) {
      const text = rawToText(raw) ?? ''
      entry = { text: raw as string, bytes: Buffer.byteLength(text, 'utf8'), marks: new Map([[0, 0]]) }
      if (typeof raw !== 'string') map.set(relativeKey, entry.text = text)
      entry.marks.set(entry.bytes, text.length)
      byKey.set(relativeKey, entry)
    }
    return entry
  }
  const set = (text: string) => {
    map.set(relativeKey, text)
    let byKey = memoryCaches.get(map)
    if (!byKey) memoryCaches.set(map, byKey = new Map())
    const bytes = Buffer.byteLength(text, 'utf8')
    byKey.set(relativeKey, { text, bytes, marks: new Map([[0, 0], [bytes, text.length]]) })
  }
  const statNow = (): WorkspaceValueStat | undefined => {
    const entry = cache()
    return entry && { size: entry.bytes }
  }
  return {
    id: `memory:${instanceId(map)}:${relativeKey}`,
    async read() {
      return cache()?.text
    },
    async write(text) {
      set(text)
    },
    async append(text, options) {
      const entry = cache()
      if (options.ifSize !== undefined && (entry?.bytes ?? 0) !== options.ifSize) return false
      if (!entry) {
        set(text)
        return true
      }
      entry.text += text
      entry.bytes += Buffer.byteLength(text, 'utf8')
      entry.marks.set(entry.bytes, entry.text.length)
      map.set(relativeKey, entry.text)
      return true
    },
    async truncate(length, options) {
      const entry = cache()
      if (options.ifSize !== undefined && (entry?.bytes ?? 0) !== options.ifSize) return false
      set(Buffer.from(entry?.text ?? '', 'utf8').subarray(0, length).toString('utf8'))
      return true
    },
    async replace(text, options) {
      const entry = cache()
      if (options.ifSize !== undefined && (entry?.bytes ?? 0) !== options.ifSize) return false
      set(text)
      return true
    },
    async replaceWith(source, options) {
      if (source.memory?.map !== map) return undefined
      const from = source.memory.cache()
      if (!from || (options.sourceSize !== undefined && from.bytes !== options.sourceSize)) return false
      const entry = cache()
      if (options.ifSize !== undefined && (entry?.bytes ?? 0) !== options.ifSize) return false
      set(from.text)
      source.memory.drop()
      return true
    },
    memory: {
      map,
      cache,
      drop() {
        map.delete(relativeKey)
        memoryCaches.get(map)?.delete(relativeKey)
      },
    },
    async stat() {
      return statNow()
    },
    statNow,
    async readBytes(start, end) {
      const entry = cache()
      if (!entry) return undefined
      if (start >= Math.min(entry.bytes, end ?? entry.bytes)) return new Uint8Array(0)
      const chars = entry.marks.get(start)
      if (end !== undefined && end < entry.bytes) {
        const endChars = entry.marks.get(end)
        return chars !== undefined && endChars !== undefined ? Buffer.from(entry.text.slice(chars, endChars), 'utf8') : Buffer.from(entry.text, 'utf8').subarray(start, end)
      }
      return chars !== undefined ? Buffer.from(entry.text.slice(chars), 'utf8') : Buffer.from(entry.text, 'utf8').subarray(start)
    },
  }
}

interface MemoryTextCache {
  text: string
  bytes: number
  /** Byte offset -> char offset of every append boundary seen. */
  marks: Map<number, number>
}
const memoryCaches = new WeakMap<Map<string, unknown>, Map<string, MemoryTextCache>>()

/** The part of an ioredis client the Redis text access uses. */
interface RedisClient {
  get(key: string): Promise<string | null>
  set(key: string, value: string): Promise<unknown>
  append(key: string, value: string): Promise<number>
  eval(script: string, keys: number, ...args: Array<string | number>): Promise<unknown>
  evalBuffer(script: string, keys: number, ...args: Array<string | number>): Promise<Buffer | null>
}

// Conditional writes run as Lua scripts: Redis runs each one atomically, so "check the size,
// then write" holds across every client of the server without a lock.
const REDIS_APPEND_IF_SIZE = `if redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -1 end
return redis.call('APPEND', KEYS[1], ARGV[2])`
const REDIS_TRUNCATE_IF_SIZE = `if ARGV[1] ~= '' and redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -1 end
local length = tonumber(ARGV[2])
local kept = ''
if length > 0 then kept = redis.call('GETRANGE', KEYS[1], 0, length - 1) end
redis.call('SET', KEYS[1], kept)
return 1`
const REDIS_REPLACE_IF_SIZE_OF = `if redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[2], ARGV[2])
return 1`
const REDIS_REPLACE_IF_SIZE = `if ARGV[1] ~= '' and redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -1 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`

const REDIS_REPLACE_WITH = `if redis.call('EXISTS', KEYS[2]) == 0 then return -1 end
if ARGV[1] ~= '' and redis.call('STRLEN', KEYS[1]) ~= tonumber(ARGV[1]) then return -1 end
if ARGV[2] ~= '' and redis.call('STRLEN', KEYS[2]) ~= tonumber(ARGV[2]) then return -1 end
redis.call('RENAME', KEYS[2], KEYS[1])
return 1`

// Reads are single scripts too: a size taken by one command and bytes by the next could mix two
// values of a key another client replaces or creates between them.
const REDIS_SIZE = `if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
return redis.call('STRLEN', KEYS[1])`
const REDIS_READ_RANGE = `if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local length = redis.call('STRLEN', KEYS[1])
local start = tonumber(ARGV[1])
local stop = length
if ARGV[2] ~= '' then stop = math.min(tonumber(ARGV[2]), length) end
if start >= stop then return '' end
return redis.call('GETRANGE', KEYS[1], start, stop - 1)`

function redisText(client: RedisClient, redisKey: string): NativeText {
  const size = (options: WorkspaceWriteOptions) => (options.ifSize === undefined ? '' : String(options.ifSize))
  return {
    id: `redis:${instanceId(client)}:${redisKey}`,
    redis: { client, key: redisKey },
    async replaceIfSizeOf(text, guard, size) {
      if (guard.redis?.client !== client || typeof text !== 'string') return undefined
      return (await client.eval(REDIS_REPLACE_IF_SIZE_OF, 2, guard.redis.key, redisKey, size, text)) !== -1
    },
    async replaceWith(source, options) {
      if (source.redis?.client !== client) return undefined
      return (await client.eval(REDIS_REPLACE_WITH, 2, redisKey, source.redis.key, options.ifSize === undefined ? '' : options.ifSize, options.sourceSize === undefined ? '' : options.sourceSize)) !== -1
    },
    async read() {
      return (await client.get(redisKey)) ?? undefined
    },
    async write(text) {
      await client.set(redisKey, text)
    },
    async append(text, options) {
      if (options.ifSize === undefined) {
        await client.append(redisKey, text)
        return true
      }
      return (await client.eval(REDIS_APPEND_IF_SIZE, 1, redisKey, options.ifSize, text)) !== -1
    },
    async truncate(length, options) {
      return (await client.eval(REDIS_TRUNCATE_IF_SIZE, 1, redisKey, size(options), length)) !== -1
    },
    async replace(text, options) {
      return (await client.eval(REDIS_REPLACE_IF_SIZE, 1, redisKey, size(options), text)) !== -1
    },
    async stat() {
      const length = Number(await client.eval(REDIS_SIZE, 1, redisKey))
      return length < 0 ? undefined : { size: length }
    },
    async readBytes(start, end) {
      return (await client.evalBuffer(REDIS_READ_RANGE, 1, redisKey, start, end === undefined ? '' : end)) ?? undefined
    },
  }
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
// An entry stays after its lock is released (no map churn per write); free ones are swept once
// there are MAX_CACHED_KEYS of them.
const locks = new Map<string, KeyLock>()

/** This process's lock of one value: held or not, the tasks waiting in call order, and its release (one function per lock, made once). */
interface KeyLock {
  held: boolean
  waiting: Array<() => void>
  /** Hands the lock to the first waiter (it stays held), else frees it. */
  release: () => void
}

function keyLock(): KeyLock {
  const lock: KeyLock = {
    held: false,
    waiting: [],
    release: () => {
      const next = lock.waiting.shift()
      if (next) next()
      else lock.held = false
    },
  }
  return lock
}

function rawToText(raw: unknown): string | undefined {
  if (raw === null || raw === undefined) return undefined
  if (typeof raw === 'string') return raw
  if (raw instanceof Uint8Array) return Buffer.from(raw).toString('utf8')
  if (raw instanceof ArrayBuffer) return Buffer.from(raw).toString('utf8')
  return JSON.stringify(raw)
}

const checkedKeys = new Map<string, string>()
const MAX_CACHED_KEYS = 4096

function checkKey(key: string): string {
  const known = checkedKeys.get(key)
  if (known !== undefined) return known
  const normalized = key.replace(/[/\\]/g, ':').replace(/:+/g, ':').replace(/^:|:$/g, '')
  if (!normalized || normalized.split(':').some(segment => segment === '.' || segment === '..')) {
    throw agentError('WORKSPACE_KEY_INVALID', `the workspace key ${JSON.stringify(key)} is empty or has "." or ".." segments`, 'use a relative key such as "memory/memory.jsonl"', { key })
  }
  if (checkedKeys.size >= MAX_CACHED_KEYS) checkedKeys.clear()
  checkedKeys.set(key, normalized)
  return normalized
}

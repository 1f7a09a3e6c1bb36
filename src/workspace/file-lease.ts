/**
 * The cross-process write lease of one fs value: an exclusive byte-range lock
 * (fs-native-extensions: Linux open file description locks, macOS `flock`, Windows
 * `LockFileEx`) of one byte far past the end of any value, taken through the value's own kept
 * `O_APPEND` descriptor. Readers are never blocked (the locked byte holds no data), no lock file
 * is made or removed, and the kernel drops the lock the moment its holder's descriptor closes or
 * its process dies (a SIGKILL included), so there is nothing stale to take over.
 *
 * A burst of writes in this process takes the lease once; it is released when the event loop is
 * next idle, or after {@link LEASE_MAX_MS} so other processes get their turn. A lease found
 * held by another process is waited for (about 12 s, then `WORKSPACE_LOCKED`).
 *
 * An older version of this package locked with proper-lockfile: a `<file>.lock` folder whose
 * holder refreshed its date every second. Such a folder is still honoured: one dated within
 * {@link LEASE_STALE_MS} of now is waited for like a held lease; one older (its holder was killed)
 * or dated that far in the future (a clock jump, a copied workspace) is removed and the lease taken.
 */
import { closeSync, fstatSync, mkdirSync, openSync, rmdirSync, statSync } from 'node:fs'
import { dirname } from 'node:path'
import { tryLock, unlock } from 'fs-native-extensions'
import { agentError } from '../errors.ts'

/** The state of this process's lease of one file. */
export interface FileLease {
  readonly file: string
  held: boolean
  /**
   * The file's stat taken while this lease was held and before any write since: the next
   * conditional append uses it instead of its own. Cleared by every write and on release.
   */
  checked?: FileIdentity & { size: number }
  /** The kept `O_APPEND` descriptor the lock is taken through and appends are written with, and the identity of the file it was opened on. */
  fd?: number
  dev: number
  ino: number
  since: number
  acquiring?: Promise<void>
  releaseScheduled: boolean
}

/** Device and inode of a file: what tells a replaced file from a grown one. */
export interface FileIdentity {
  dev: number
  ino: number
}

/** A lease held this long (ms) is released after the write in progress, even within a burst. */
export const LEASE_MAX_MS = 20
/** An older version's `<file>.lock` folder not refreshed for this long (ms), or dated this far in the future, belongs to no live holder. */
export const LEASE_STALE_MS = 3000
/** Tries of a contended lease (each at most 20 ms apart) before `WORKSPACE_LOCKED`: about 12 s. */
const LEASE_RETRIES = 600
/** The locked byte: far past the end of any value, so the lock never covers data (Windows locks are mandatory). */
const LOCK_OFFSET = 2 ** 62
/** Kept descriptors of files whose lease is not held, at most (the least recently used are closed first). */
const MAX_KEPT_DESCRIPTORS = 32

const leases = new Map<string, FileLease>()
/** Leases with an open descriptor, least recently used first. */
const descriptors = new Map<string, FileLease>()

/**
 * Runs `task` (synchronous) under the lease of `file`, taking it first when this process does
 * not hold it. `task` gets the lease: its descriptor, and the stat made under it when there is one.
 *
 * @throws `WORKSPACE_LOCKED` when another process held the lease (or an older version's lock
 * folder stayed fresh) for about 12 s.
 */
export function withFileLease<T>(file: string, task: (lease: FileLease) => T | typeof RETAKE): Promise<T> {
  let lease = leases.get(file)
  if (!lease) leases.set(file, lease = { file, held: false, dev: 0, ino: 0, since: 0, releaseScheduled: false })
  // Held already (a burst of writes): run now, no promise turn to wait for.
  if (lease.held) {
    let result: T | typeof RETAKE
    try {
      result = runLeased(lease, task)
    }
    catch (error) {
      return Promise.reject(error)
    }
    return result === RETAKE ? withFileLease(file, task) : Promise.resolve(result)
  }
  return (async () => {
    for (;;) {
      while (!lease.held) {
        lease.acquiring ??= acquireLease(file, lease).finally(() => { lease.acquiring = undefined })
        await lease.acquiring
      }
      const result = runLeased(lease, task)
      if (result !== RETAKE) return result
    }
  })()
}

/**
 * {@link withFileLease} in this turn: runs `task` when this process holds the lease of `file` or
 * takes it free now, and returns its result; `undefined` (the task not run) when the lease is
 * being taken or is held by another process, or the task returned {@link RETAKE}: then call
 * {@link withFileLease}.
 */
export function withFileLeaseNow<T>(file: string, task: (lease: FileLease) => T | typeof RETAKE): T | undefined {
  const lease = leases.get(file)
  if (!lease || (!lease.held && (lease.acquiring !== undefined || tryAcquire(file, lease) !== undefined))) return undefined
  const result = runLeased(lease, task)
  return result === RETAKE ? undefined : result
}

/**
 * What a leased task returns after {@link dropLease}: the path named another file than the
 * locked one, so {@link withFileLease} takes the lease again (on the file the path names) and
 * runs the task once more.
 */
export const RETAKE: unique symbol = Symbol('retake the lease')

/** Forgets the stat kept under the lease of `file` (its size is about to change, or did). */
export function forgetKnownSize(file: string): void {
  const lease = leases.get(file)
  if (lease) lease.checked = undefined
}

/** Keeps `stats` of `file` for the next conditional append when taken under this process's lease of that very file. */
export function noteLeasedStat(file: string, stats: FileIdentity & { size: number }): void {
  const lease = leases.get(file)
  if (lease?.held && isLeasedFile(lease, stats)) lease.checked = stats
}

/** Whether `stats` are of the file the lease's descriptor is open on (not one that replaced it). */
export function isLeasedFile(lease: FileLease, stats: FileIdentity | undefined): boolean {
  return stats !== undefined && stats.ino === lease.ino && stats.dev === lease.dev
}

/**
 * Ends the lease of the task in progress and closes its descriptor: the path names another file
 * now (this process replaced it, or a writer that took no lease did), and a lock of the old file
 * guards nothing. The next write (or the task itself, returning {@link RETAKE}) takes the lease
 * again, on the file the path names.
 */
export function dropLease(lease: FileLease): void {
  lease.held = false
  lease.checked = undefined
  closeDescriptor(lease)
}

function runLeased<T>(lease: FileLease, task: (lease: FileLease) => T): T {
  try {
    return task(lease)
  }
  finally {
    if (Date.now() - lease.since > LEASE_MAX_MS) releaseLease(lease)
    else if (lease.held && !lease.releaseScheduled) {
      lease.releaseScheduled = true
      setImmediate(() => {
        lease.releaseScheduled = false
        releaseLease(lease)
      })
    }
  }
}

async function acquireLease(file: string, lease: FileLease): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    const blocker = tryAcquire(file, lease)
    if (blocker === undefined) return
    if (attempt >= LEASE_RETRIES) throw lockedError(file, blocker)
    await new Promise(done => setTimeout(done, Math.min(20, Math.ceil(1.2 ** attempt))))
  }
}

/** Takes the lease now when free; else says what holds it: another process's lock, or an older version's fresh lock folder. */
function tryAcquire(file: string, lease: FileLease): 'lock' | 'folder' | undefined {
  if (olderLockHeld(file)) return 'folder'
  for (let opened = 0; opened < 3; opened++) {
    const fd = openDescriptor(file, lease)
    if (!tryLock(fd, LOCK_OFFSET, 1)) return 'lock'
    const stats = statSync(file, { throwIfNoEntry: false })
    if (isLeasedFile(lease, stats)) {
      lease.held = true
      lease.since = Date.now()
      lease.checked = { size: stats!.size, dev: stats!.dev, ino: stats!.ino }
      return undefined
    }
    // Replaced or removed since the descriptor was opened: lock the file the path names now.
    closeDescriptor(lease)
  }
  return 'lock'
}

/**
 * Whether an older version's `<file>.lock` folder is held by a live holder (refreshed within
 * {@link LEASE_STALE_MS}). A stale one, or one dated that far in the future, is removed.
 */
function olderLockHeld(file: string): boolean {
  const folder = `${file}.lock`
  const stats = statSync(folder, { throwIfNoEntry: false })
  if (!stats?.isDirectory()) return false
  const age = Date.now() - stats.mtimeMs
  if (age <= LEASE_STALE_MS && age >= -LEASE_STALE_MS) return true
  try {
    rmdirSync(folder)
  }
  catch (error) {
    // Gone meanwhile: nothing to take over. Anything else (not empty, no permission): not ours to remove.
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') return true
  }
  return false
}

function lockedError(file: string, blocker: 'lock' | 'folder') {
  const waited = `about ${Math.round(LEASE_RETRIES * 20 / 1000)} s`
  if (blocker === 'folder') {
    return agentError('WORKSPACE_LOCKED', `the lock "${file}.lock" stayed held while this write waited for it (${waited}): another process (of an older version of this package) keeps it fresh, or it is on a file system whose clock differs`, `if no other process uses this workspace, remove the folder "${file}.lock" and retry; otherwise find the process that holds it`, { lock: `${file}.lock` })
  }
  return agentError('WORKSPACE_LOCKED', `the write lock of "${file}" stayed held by another process while this write waited for it (${waited}): that process is stopped or stuck in the middle of a write`, `find the process that holds it (\`fuser "${file}"\` lists the processes that have it open) and let it go on or end it; a process that ends releases the lock at once`, { lock: file })
}

function releaseLease(lease: FileLease): void {
  if (!lease.held) return
  lease.held = false
  lease.checked = undefined
  try {
    unlock(lease.fd!, LOCK_OFFSET, 1)
  }
  catch {
    // Closing the descriptor releases the lock for certain.
    closeDescriptor(lease)
  }
}

function openDescriptor(file: string, lease: FileLease): number {
  if (lease.fd !== undefined) {
    descriptors.delete(file)
    descriptors.set(file, lease)
    return lease.fd
  }
  for (const kept of descriptors.values()) {
    if (descriptors.size < MAX_KEPT_DESCRIPTORS) break
    if (!kept.held) closeDescriptor(kept)
  }
  mkdirSync(dirname(file), { recursive: true })
  const fd = openSync(file, 'a')
  const opened = fstatSync(fd)
  lease.fd = fd
  lease.dev = opened.dev
  lease.ino = opened.ino
  descriptors.set(file, lease)
  return fd
}

function closeDescriptor(lease: FileLease): void {
  if (lease.fd === undefined) return
  const fd = lease.fd
  lease.fd = undefined
  lease.dev = lease.ino = 0
  descriptors.delete(lease.file)
  try {
    closeSync(fd)
  }
  catch {
    // Already closed: nothing to release.
  }
}

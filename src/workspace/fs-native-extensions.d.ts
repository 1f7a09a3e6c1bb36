// The part of fs-native-extensions (holepunch; no declarations of its own) the fs lease uses:
// byte-range locks on a descriptor (Linux: open file description locks, F_OFD_SETLK; macOS:
// flock; Windows: LockFileEx), released by the kernel when the descriptor closes or the process ends.
declare module 'fs-native-extensions' {
  /** Takes an exclusive lock of `length` bytes at `offset` (0 = to the end); `false` when another descriptor holds one that overlaps. */
  export function tryLock(fd: number, offset?: number, length?: number, options?: { shared?: boolean }): boolean
  /** Releases the lock of `length` bytes at `offset` held through `fd`. */
  export function unlock(fd: number, offset?: number, length?: number): void
}

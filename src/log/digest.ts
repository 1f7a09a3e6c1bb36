/**
 * SHA-256 for the digest chain of the log, as 64 lowercase hex characters.
 *
 * Source: capability document, "Each line has the store name, scope, version, and a digest
 * (SHA-256 when Web Crypto is available)". We hash with `node:crypto` where it exists (about 20x
 * faster than awaiting Web Crypto one line at a time) and fall back to `crypto.subtle` elsewhere.
 */

type Hasher = (text: string) => string | Promise<string>

let hasher: Promise<Hasher> | undefined

async function loadHasher(): Promise<Hasher> {
  try {
    const { createHash } = await import('node:crypto')
    if (typeof createHash === 'function') return text => createHash('sha256').update(text, 'utf8').digest('hex')
  }
  catch {
    // Not on Node (edge runtime, browser): use Web Crypto below.
  }
  const subtle = globalThis.crypto?.subtle
  if (!subtle) throw new Error('no SHA-256 implementation: neither node:crypto nor Web Crypto is available')
  return async (text) => {
    const bytes = new Uint8Array(await subtle.digest('SHA-256', new TextEncoder().encode(text)))
    let hex = ''
    for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
    return hex
  }
}

let syncHasher: Promise<((text: string) => string) | undefined> | undefined

/**
 * The synchronous SHA-256 of `node:crypto` (`crypto.hash` where it exists, else `createHash`),
 * as a function of text to 64 lowercase hex characters, or `undefined` where only Web Crypto
 * exists (then use {@link sha256Hex}). Replay hashes every line with it: no promise per line.
 */
export function sha256HexSync(): Promise<((text: string) => string) | undefined> {
  syncHasher ??= (async () => {
    try {
      const crypto = await import('node:crypto')
      const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash
      if (typeof oneShot === 'function') return syncHash = (text: string) => oneShot('sha256', text, 'hex')
      if (typeof crypto.createHash === 'function') return syncHash = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest('hex')
    }
    catch {
      // Not on Node.
    }
    return undefined
  })()
  return syncHasher
}

/**
 * SHA-256 of the UTF-8 bytes of `text`, as 64 lowercase hex characters.
 * Uses `node:crypto` `createHash` when available, else Web Crypto `crypto.subtle.digest`.
 *
 * @throws Error when the runtime has neither implementation.
 */
export async function sha256Hex(text: string): Promise<string> {
  hasher ??= loadHasher()
  return (await hasher)(text)
}

/** A line hash: synchronous where `node:crypto` exists, else a promise of Web Crypto's. */
export type LineHash = (text: string) => string | Promise<string>

let syncHash: ((text: string) => string) | undefined

/** The fastest SHA-256 to hex for writing lines: synchronous `node:crypto` where it exists, else Web Crypto. */
export async function lineHasher(): Promise<LineHash> {
  syncHash = await sha256HexSync()
  return syncHash ?? sha256Hex
}

/** The synchronous hasher once {@link lineHasher} or {@link sha256HexSync} found one (so a write needs no turn of the event loop to get it). */
export function knownSyncHash(): ((text: string) => string) | undefined {
  return syncHash
}

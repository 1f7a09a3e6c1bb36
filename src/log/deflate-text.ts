/**
 * Text or bytes compressed as raw DEFLATE (RFC 1951) and written as base64 (RFC 4648, with
 * padding), so that a compressed part of a checkpoint stays a line of ASCII text in a text value. `node:zlib`
 * where it exists (synchronous, level 1: at checkpoint sizes about 6x faster than level 6 for
 * 5% more bytes), else the web `CompressionStream` / `DecompressionStream` ("deflate-raw"); both
 * read what the other writes.
 */

interface Zlib {
  deflateRawSync(data: Uint8Array, options: { level: number }): Uint8Array
  inflateRawSync(data: Uint8Array, options: { maxOutputLength: number; chunkSize: number }): Uint8Array
}

let zlib: Promise<Zlib | undefined> | undefined
const loadZlib = () => (zlib ??= (async () => {
  try {
    return await import('node:zlib') as unknown as Zlib
  }
  catch {
    // Not on Node (edge runtime, browser), or a bundler's import wrapper that fails: web streams below.
    return undefined
  }
})())

const encoder = new TextEncoder()
const decoder = new TextDecoder('utf-8', { fatal: true })

function toBase64(bytes: Uint8Array): string {
  const buffer = (globalThis as { Buffer?: { from(bytes: Uint8Array): { toString(encoding: 'base64'): string } } }).Buffer
  if (buffer) return buffer.from(bytes).toString('base64')
  let binary = ''
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000))
  return btoa(binary)
}

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

function fromBase64(text: string): Uint8Array {
  if (text.length % 4 !== 0) throw new Error('it is not base64 text')
  const buffer = (globalThis as { Buffer?: { from(text: string, encoding: 'base64'): Uint8Array } }).Buffer
  if (buffer) {
    // Node's decoder skips what is not base64 (and stops at padding), so such a text decodes to
    // fewer bytes than its length gives: checking the count costs no second string, unlike
    // encoding the bytes back. (It also reads the URL-safe alphabet, which no writer writes.)
    const bytes = buffer.from(text, 'base64')
    const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
    if (bytes.length !== (text.length / 4) * 3 - padding) throw new Error('it is not base64 text')
    return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length)
  }
  if (!BASE64.test(text)) throw new Error('it is not base64 text')
  return Uint8Array.from(atob(text), char => char.charCodeAt(0))
}

async function throughStream(bytes: Uint8Array, stream: CompressionStream | DecompressionStream): Promise<Uint8Array> {
  return new Uint8Array(await new Response(new Blob([bytes as BlobPart]).stream().pipeThrough(stream)).arrayBuffer())
}

/** `text` (UTF-8) compressed with raw DEFLATE, as base64. */
export async function deflateToBase64(text: string): Promise<string> {
  return deflateBytesToBase64(encoder.encode(text))
}

/** `bytes` compressed with raw DEFLATE, as base64. */
export async function deflateBytesToBase64(bytes: Uint8Array): Promise<string> {
  const node = await loadZlib()
  return toBase64(node ? node.deflateRawSync(bytes, { level: 1 }) : await throughStream(bytes, new CompressionStream('deflate-raw')))
}

/**
 * The text of {@link deflateToBase64}'s `base64`, which must inflate to exactly `bytes` UTF-8 bytes.
 *
 * @throws Error when it is not base64, not a complete raw DEFLATE stream, not of `bytes` bytes
 * (it stops inflating past them) or not UTF-8.
 */
export async function inflateFromBase64(base64: string, bytes: number): Promise<string> {
  const inflated = await inflateBytesFromBase64(base64, bytes)
  try {
    return decoder.decode(inflated)
  }
  catch {
    throw new Error('it does not inflate to UTF-8 text')
  }
}

/** Largest output buffer allocated before inflating: a length claimed by a section is not trusted with more. */
const MAX_CHUNK_BYTES = 1 << 20

/**
 * The output buffer size of an inflate to `bytes` bytes: one buffer of `bytes` and one spare byte
 * (so that zlib sees the stream end without a second buffer), instead of 16 KiB chunks joined
 * into a copy (three buffers and a copy for a 46 KB section); at least zlib's 64.
 */
function inflateChunkBytes(bytes: number): number {
  return Math.min(MAX_CHUNK_BYTES, Math.max(64, bytes + 1))
}

/**
 * The bytes of {@link deflateBytesToBase64}'s `base64`, which must inflate to exactly `bytes` bytes.
 *
 * @throws Error when it is not base64, not a complete raw DEFLATE stream or not of `bytes` bytes
 * (it stops inflating past them).
 */
export async function inflateBytesFromBase64(base64: string, bytes: number): Promise<Uint8Array> {
  const compressed = fromBase64(base64)
  const node = await loadZlib()
  let inflated: Uint8Array
  try {
    inflated = node ? node.inflateRawSync(compressed, { maxOutputLength: Math.max(1, bytes), chunkSize: inflateChunkBytes(bytes) }) : await throughStream(compressed, new DecompressionStream('deflate-raw'))
  }
  catch (error) {
    throw new Error(`it does not inflate (${(error as Error).message})`)
  }
  if (inflated.length !== bytes) throw new Error(`it inflates to ${inflated.length} bytes, not ${bytes}`)
  return inflated
}

import { describe, expect, it } from 'vitest'
import { deflateBytesToBase64, inflateBytesFromBase64 } from '../../src/log/deflate-text.ts'

const bytesOf = (length: number) => Uint8Array.from({ length }, (_, at) => (at * 31 + (at >> 3)) % 251)

describe('inflateBytesFromBase64', () => {
  it('an inflated payload is held in a buffer of its bytes and one spare byte, not in a 16 KiB chunk', async () => {
    // 5,000 bytes: above the size Node serves from its shared 8 KiB buffer pool.
    const payload = bytesOf(5000)
    const inflated = await inflateBytesFromBase64(await deflateBytesToBase64(payload), payload.length)
    expect(Buffer.from(inflated).equals(Buffer.from(payload))).toBe(true)
    expect(inflated.buffer.byteLength).toBe(5001)
  })

  it('a payload larger than one zlib chunk inflates to its exact bytes', async () => {
    const payload = bytesOf(100_000)
    const inflated = await inflateBytesFromBase64(await deflateBytesToBase64(payload), payload.length)
    expect(inflated.length).toBe(100_000)
    expect(Buffer.from(inflated).equals(Buffer.from(payload))).toBe(true)
  })

  it('a stream that inflates past its stated bytes is refused', async () => {
    const payload = bytesOf(5000)
    await expect(inflateBytesFromBase64(await deflateBytesToBase64(payload), 4999)).rejects.toThrow(/does not inflate|inflates to/)
  })

  it('a stream that inflates to fewer than its stated bytes is refused', async () => {
    const payload = bytesOf(5000)
    await expect(inflateBytesFromBase64(await deflateBytesToBase64(payload), 5001)).rejects.toThrow('it inflates to 5000 bytes, not 5001')
  })
})

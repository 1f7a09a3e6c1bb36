/** The byte codec of index snapshots: unsigned LEB128 varints, zigzag signed ones, and base64. */
import { grow } from './arrays.ts'

/** Unsigned LEB128 varints (and zigzag signed ones) into a growing byte buffer. */
export class ByteWriter {
  private bytes: Uint8Array
  length = 0
  constructor(capacity: number) {
    this.bytes = new Uint8Array(Math.max(64, capacity))
  }

  /** An integer from 0 to 2^32 - 1. */
  uint(value: number): void {
    if (this.length + 5 > this.bytes.length) this.bytes = grow(this.bytes, this.length + 5)
    const bytes = this.bytes
    while (value >= 0x80) {
      bytes[this.length++] = (value & 0x7f) | 0x80
      value >>>= 7
    }
    bytes[this.length++] = value
  }

  /** A 32-bit signed integer (zigzag: small magnitudes take one byte). */
  int(value: number): void {
    this.uint(((value << 1) ^ (value >> 31)) >>> 0)
  }

  /** A safe integer of any sign (zigzag, by arithmetic: millisecond times and their differences). */
  wide(value: number): void {
    let zigzag = value >= 0 ? value * 2 : -value * 2 - 1
    if (this.length + 9 > this.bytes.length) this.bytes = grow(this.bytes, this.length + 9)
    while (zigzag >= 0x80) {
      this.bytes[this.length++] = (zigzag % 0x80) | 0x80
      zigzag = Math.floor(zigzag / 0x80)
    }
    this.bytes[this.length++] = zigzag
  }

  base64(): string {
    return toBase64(this.written())
  }

  /** The bytes written so far (a view: later writes may replace the buffer, never change these). */
  written(): Uint8Array {
    return this.bytes.subarray(0, this.length)
  }
}

/** Reads what {@link ByteWriter} wrote; every read past the end or of an over-long varint throws. */
export class ByteReader {
  private at = 0
  constructor(private readonly bytes: Uint8Array) {}

  uint(): number {
    const bytes = this.bytes
    if (this.at >= bytes.length) throw new Error('the index data ends early')
    let byte = bytes[this.at++]!
    if (byte < 0x80) return byte
    let value = byte & 0x7f
    let scale = 0x80
    for (;;) {
      if (this.at >= bytes.length) throw new Error('the index data ends early')
      byte = bytes[this.at++]!
      value += (byte & 0x7f) * scale
      if (byte < 0x80) break
      scale *= 0x80
      if (scale > 0x10000000) throw new Error('the index data holds an over-long number')
    }
    if (value > 0xffffffff) throw new Error('the index data holds an over-long number')
    return value
  }

  int(): number {
    const zigzag = this.uint()
    return (zigzag >>> 1) ^ -(zigzag & 1)
  }

  wide(): number {
    let zigzag = 0
    let scale = 1
    for (;;) {
      if (this.at >= this.bytes.length) throw new Error('the index data ends early')
      const byte = this.bytes[this.at++]!
      zigzag += (byte & 0x7f) * scale
      if (byte < 0x80) break
      scale *= 0x80
      if (scale > 2 ** 56) throw new Error('the index data holds an over-long number')
    }
    if (zigzag > Number.MAX_SAFE_INTEGER) throw new Error('the index data holds an over-long number')
    return zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2
  }

  remaining(): number {
    return this.bytes.length - this.at
  }

  /** Where the next read starts, in bytes. */
  get offset(): number {
    return this.at
  }

  /** Moves past `count` bytes (read by the caller in place). @throws Error when fewer remain. */
  skip(count: number): void {
    if (count > this.bytes.length - this.at) throw new Error('the index data ends early')
    this.at += count
  }
}

const NodeBuffer = (globalThis as { Buffer?: { from(data: ArrayBufferLike | string, offsetOrEncoding?: number | 'base64', length?: number): Uint8Array & { toString(encoding: 'base64'): string } } }).Buffer

export function toBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64')
  let binary = ''
  for (let at = 0; at < bytes.length; at += 0x8000) binary += String.fromCharCode(...bytes.subarray(at, at + 0x8000))
  return btoa(binary)
}

export function fromBase64(text: string): Uint8Array {
  if (NodeBuffer) return NodeBuffer.from(text, 'base64')
  const binary = atob(text)
  const bytes = new Uint8Array(binary.length)
  for (let at = 0; at < binary.length; at++) bytes[at] = binary.charCodeAt(at)
  return bytes
}

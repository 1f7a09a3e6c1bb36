/** A copy of `array` at least `minimum` long (doubling), the new tail zeroed. */
export function grow<T extends Int32Array | Uint32Array | Float64Array | Uint8Array>(array: T, minimum: number): T {
  const next = new (array.constructor as new (length: number) => T)(Math.max(minimum, array.length * 2))
  next.set(array)
  return next
}

/** A capacity for `count` entries known at a restore, with room for an eighth more (at least 16) that later writes add. */
export function withRoom(count: number): number {
  return count + Math.max(16, count >> 3)
}

/** Each text of `texts` (distinct) by its position: the id map of texts kept by id. */
export function idsByText(texts: readonly string[]): Map<string, number> {
  const map = new Map<string, number>()
  for (let id = 0; id < texts.length; id++) map.set(texts[id]!, id)
  return map
}

/** Bits set in a 32-bit word. */
export function popcount(word: number): number {
  word -= (word >>> 1) & 0x55555555
  word = (word & 0x33333333) + ((word >>> 2) & 0x33333333)
  return Math.imul((word + (word >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24
}

/** A copy of `array` at least `minimum` long (doubling), the new tail zeroed. */
export function grow<T extends Int32Array | Uint32Array | Float64Array | Uint8Array>(array: T, minimum: number): T {
  const next = new (array.constructor as new (length: number) => T)(Math.max(minimum, array.length * 2))
  next.set(array)
  return next
}

/**
 * xorshift32 (Marsaglia, 2003) from `seed`: numbers in [-0.5, 0.5), the same sequence for the same
 * seed. Its period is long enough that no two of 100,000 vectors of 512 numbers repeat (a 31-bit
 * LCG's low bits cycle within a few thousand).
 */
export function xorshift32(seed: number): () => number {
  return () => {
    seed ^= seed << 13
    seed ^= seed >>> 17
    seed ^= seed << 5
    return (seed >>> 0) / 0x100000000 - 0.5
  }
}

/**
 * The adjacent character pairs of a growing list of texts (a run vocabulary), as a hashed bit set:
 * a text that contains a piece contains every pair of the piece, so a piece with a pair whose bit
 * is clear is in none of the texts. A filter before a scan of the texts: no false "no", rare
 * false "maybe" (one bit per pair in 8,192).
 */
const BITS_LOG2 = 13
const WORDS = (1 << BITS_LOG2) >>> 5

/** The bit of the pair (`first`, `second`) of UTF-16 code units. */
function pairBit(first: number, second: number): number {
  return (Math.imul(first, 0x9e3779b1) ^ Math.imul(second + 1, 0x85ebca77)) >>> (32 - BITS_LOG2)
}

export class CharacterPairs {
  /** Bits of the pairs of `texts[0 .. taken)`, made on first use (1 KB). */
  private bits: Uint32Array | undefined
  private taken = 0
  /** The list the bits are of (a restored index's list is another array). */
  private of: readonly string[] | undefined

  /**
   * Whether a text of `texts` may contain `piece` (false: none does). `texts` only grows at its end
   * between calls; its new texts are taken in here.
   */
  mayHold(texts: readonly string[], piece: string): boolean {
    if (piece.length < 2) return true
    const bits = this.take(texts)
    for (let at = 1; at < piece.length; at++) {
      const bit = pairBit(piece.charCodeAt(at - 1), piece.charCodeAt(at))
      if ((bits[bit >>> 5]! & (1 << (bit & 31))) === 0) return false
    }
    return true
  }

  /** Takes in the new texts of `texts` when the bits are made for it (a new run is taken while its text is at hand), else nothing. */
  extend(texts: readonly string[]): void {
    if (this.bits !== undefined && this.of === texts) this.take(texts)
  }

  /** Takes in the texts of `texts` not taken yet; returns the bits (made for `texts` when missing or of another list). */
  take(texts: readonly string[]): Uint32Array {
    let bits = this.bits
    if (bits === undefined || this.of !== texts) {
      this.bits = bits = new Uint32Array(WORDS)
      this.of = texts
      this.taken = 0
    }
    for (; this.taken < texts.length; this.taken++) {
      const text = texts[this.taken]!
      for (let at = 1; at < text.length; at++) {
        const bit = pairBit(text.charCodeAt(at - 1), text.charCodeAt(at))
        bits[bit >>> 5]! |= 1 << (bit & 31)
      }
    }
    return bits
  }
}

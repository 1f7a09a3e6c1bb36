/** Bounded top-k selection: a min-heap of the best items seen, so a search keeps `limit` candidates and not every match. */

/** Keeps the `capacity` greatest items under `compare` (a min-heap); `sorted()` gives them greatest first. */
export class TopK<T> {
  private readonly heap: T[] = []
  constructor(readonly capacity: number, private readonly compare: (a: T, b: T) => number) {}

  /**
   * Offers `item`; returns the item this leaves out (`item` itself when it does not enter, the
   * evicted least when it does and the heap was full), else `undefined`. The heap holds no
   * reference to a returned item: a caller that made it may fill it again for its next offer.
   */
  push(item: T): T | undefined {
    if (this.capacity <= 0) return item
    const heap = this.heap
    if (heap.length < this.capacity) {
      heap.push(item)
      let at = heap.length - 1
      while (at > 0) {
        const parent = (at - 1) >> 1
        if (this.compare(heap[at]!, heap[parent]!) >= 0) break
        const swap = heap[at]!
        heap[at] = heap[parent]!
        heap[parent] = swap
        at = parent
      }
      return undefined
    }
    if (this.compare(item, heap[0]!) <= 0) return item
    const evicted = heap[0]!
    heap[0] = item
    let at = 0
    for (;;) {
      const left = 2 * at + 1
      const right = left + 1
      let least = at
      if (left < heap.length && this.compare(heap[left]!, heap[least]!) < 0) least = left
      if (right < heap.length && this.compare(heap[right]!, heap[least]!) < 0) least = right
      if (least === at) break
      const swap = heap[at]!
      heap[at] = heap[least]!
      heap[least] = swap
      at = least
    }
    return evicted
  }

  /** The least kept item once the heap is full (an item must beat it to enter), else `undefined`. */
  floor(): T | undefined {
    return this.heap.length >= this.capacity ? this.heap[0] : undefined
  }

  sorted(): T[] {
    return [...this.heap].sort((a, b) => this.compare(b, a))
  }
}

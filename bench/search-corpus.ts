/**
 * Synthetic corpora of the search benchmarks (bench/index-build.ts, bench/search-engine.ts): short
 * notes of a small vocabulary with lorem ipsum filler, and varied English-like sentences of a
 * 20,000-word vocabulary with a Zipf-like spread, mixed case, apostrophes and numbers.
 */
import type { MemoryRecord } from '../src/memory/types.ts'

export const WORDS = ['coffee', 'tea', 'window', 'aisle', 'paris', 'lyon', 'dog', 'cat', 'music', 'jazz', 'blues', 'garden', 'python', 'rust', 'hiking', 'kayak']
export const synthetic = (n: number) => `note ${n}: ${WORDS[n % WORDS.length]} ${WORDS[(n * 7) % WORDS.length]} ${n % 997 === 0 ? `zyzzyva${n}` : ''} ${'lorem ipsum dolor sit amet '.repeat(4)}`
// Varied sentences (~130 characters): mixed case, apostrophes, numbers, punctuation, a large vocabulary.
export const VOCABULARY = Array.from({ length: 20000 }, (_, i) => {
  let word = ''
  for (let x = i * 2654435761 >>> 0, k = 0; k < 3 + (i % 7); k++, x = (x * 1103515245 + 12345) >>> 0) word += 'etaoinshrdlcumwfgypbvkjxqz'[(x >>> 16) % (k === 0 ? 26 : 14)]
  return word
})
export const COMMON = ['the', 'I', 'my', 'we', 'Caroline\'s', 'didn\'t', 'went', 'to', 'and', 'a', 'with', 'on', 'May', '2023,', 'painting', 'LGBTQ', 'support-group', '3.5', 'o\'clock']
export const varied = (n: number) => {
  const words: string[] = []
  let x = (n * 2246822519) >>> 0
  for (let length = 0; length < 130;) {
    x = (x * 1664525 + 1013904223) >>> 0
    const word = x % 3 === 0 ? COMMON[(x >>> 8) % COMMON.length]! : VOCABULARY[Math.floor(((x >>> 8) / 0xffffff) ** 2 * VOCABULARY.length)]!
    const cased = x % 11 === 0 ? word[0]!.toUpperCase() + word.slice(1) : word
    words.push(x % 13 === 0 ? `${cased}.` : cased)
    length += cased.length + 1
  }
  return words.join(' ')
}
export const record = (n: number, content: string, scope: Record<string, string> = { agent: 'bench' }): MemoryRecord => ({
  id: `mem_${n}`, store: 'agent', scope, kind: 'semantic', content, title: n % 5 === 0 ? `Title ${n % 50}` : undefined,
  tags: n % 3 === 0 ? ['travel', `t${n % 10}`] : [], metadata: {}, pinned: false, supersedes: [], provenance: {}, audit: { via: 'api' },
  createdAt: new Date(Date.UTC(2024, 0, 1) + n * 1000).toISOString(), updatedAt: '2024-01-01T00:00:00.000Z', version: 1, status: 'active',
})


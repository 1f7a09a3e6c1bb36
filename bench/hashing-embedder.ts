/**
 * A deterministic local embedder for the benchmark and tests: an AI SDK `EmbeddingModelV3`
 * (`MockEmbeddingModelV3` from `ai/test`) whose vector is a hashed bag of the text's stemmed
 * terms and of their character trigrams (so misspellings and word parts still overlap). It
 * downloads nothing and calls no network; it is a lexical stand-in for a neural embedder, used
 * to exercise the hybrid (RRF) path, not to claim semantic quality.
 */
import { MockEmbeddingModelV3 } from 'ai/test'
import { tokenizeWords } from '../src/search/text.ts'

/** Default vector length. */
export const HASHING_DIMENSIONS = 1024

function hash(text: string, dimensions: number): number {
  let value = 2166136261
  for (let i = 0; i < text.length; i++) value = Math.imul(value ^ text.charCodeAt(i), 16777619)
  return (value >>> 0) % dimensions
}

/** The vector of `text`: +1 per term, +0.5 per character trigram of each surface word, L2-normalized. */
export function hashingVector(text: string, dimensions = HASHING_DIMENSIONS): number[] {
  const vector = new Array<number>(dimensions).fill(0)
  for (const { surface, term } of tokenizeWords(text)) {
    vector[hash(`w:${term}`, dimensions)]! += 1
    const padded = `#${surface}#`
    for (let i = 0; i + 3 <= padded.length; i++) vector[hash(`c:${padded.slice(i, i + 3)}`, dimensions)]! += 0.5
  }
  const norm = Math.sqrt(vector.reduce((sum, value) => sum + value * value, 0)) || 1
  return vector.map(value => value / norm)
}

/** A new hashing embedder of `dimensions` (default {@link HASHING_DIMENSIONS}); `embedded` counts the values it embedded. */
export function hashingEmbedder(dimensions = HASHING_DIMENSIONS): MockEmbeddingModelV3 & { embedded: number } {
  const model = new MockEmbeddingModelV3({
    modelId: dimensions === HASHING_DIMENSIONS ? 'hashing-bag-of-words' : `hashing-bag-of-words-${dimensions}`,
    maxEmbeddingsPerCall: 2048,
    doEmbed: async ({ values }) => {
      result.embedded += values.length
      return { embeddings: values.map(value => hashingVector(value, dimensions)), warnings: [] }
    },
  }) as MockEmbeddingModelV3 & { embedded: number }
  const result = model
  result.embedded = 0
  return result
}

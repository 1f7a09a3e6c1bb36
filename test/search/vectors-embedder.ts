/**
 * A scripted AI SDK embedding model for the vector tests (`MockEmbeddingModelV3`): a hashed bag
 * of lower-cased words (16 dimensions), keeping every text it embeds, call by call. With `fail`,
 * every call throws, as a provider that is down does.
 */
import { MockEmbeddingModelV3 } from 'ai/test'

export interface CountingEmbedder extends MockEmbeddingModelV3 {
  /** The values of each successful call, in call order. */
  batches: string[][]
  /** Calls made, failed ones included. */
  calls: number
  fail: boolean
}

export function wordVector(text: string): number[] {
  const vector = new Array<number>(16).fill(0)
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    let hash = 7
    for (const char of word) hash = (hash * 31 + char.charCodeAt(0)) >>> 0
    vector[hash % 16]! += 1
  }
  return vector
}

export function countingEmbedder(modelId = 'bag-of-words'): CountingEmbedder {
  const model = new MockEmbeddingModelV3({
    provider: 'test',
    modelId,
    maxEmbeddingsPerCall: 100,
    doEmbed: async ({ values }) => {
      model.calls++
      if (model.fail) throw new Error('embedding service unavailable')
      model.batches.push([...values])
      return { embeddings: values.map(wordVector), warnings: [] }
    },
  }) as CountingEmbedder
  model.batches = []
  model.calls = 0
  model.fail = false
  return model
}

/**
 * `agent memory search` on a store with `embed`: hybrid search falls back to the full-text
 * results when the embedder fails (packages missing, network), and says nothing. The CLI wraps
 * the store's model to see that failure and print it, so an operator knows the results are
 * full-text only and how to fix the embedder.
 */
import type { EmbeddingModel } from 'ai'

/** A model that records the first error its `doEmbed` threw, and that error. */
export interface WatchedEmbedder {
  model: EmbeddingModel
  /** The first `doEmbed` error, or `undefined` when every call succeeded (or none was made). */
  failure(): unknown
}

/**
 * Wraps `model` (an AI SDK embedding model object) so that a `doEmbed` error is remembered and
 * rethrown; every other property (provider, modelId, limits) is the model's own, so the vectors
 * stored for it are found under the same id. A model given by id (a string) is returned as is.
 */
export function watchEmbedder(model: EmbeddingModel): WatchedEmbedder {
  let failure: unknown
  if (typeof model !== 'object' || model === null || typeof (model as { doEmbed?: unknown }).doEmbed !== 'function') return { model, failure: () => failure }
  const original = model as unknown as { doEmbed: (...args: unknown[]) => PromiseLike<unknown> }
  const watched = Object.create(model, {
    doEmbed: {
      value: async (...args: unknown[]) => {
        try {
          return await original.doEmbed(...args)
        }
        catch (error) {
          failure ??= error
          throw error
        }
      },
    },
  }) as EmbeddingModel
  return { model: watched, failure: () => failure }
}

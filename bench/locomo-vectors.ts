/**
 * What the hybrid-variant benches (bench/recall-variants.ts, bench/recall-fusion-folds.ts) share:
 * the LoCoMo dev conversations loaded into an in-memory store as bench/recall.ts does, and unit
 * vectors from `localEmbedder()` through the disk cache (bench/cached-embedder.ts).
 */
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { localEmbedder } from '../src/memory/embeddings.ts'
import { inMemoryMemoryStore } from '../src/memory/stores/in-memory.ts'
import type { MemoryRecord, MemoryStoreAdapter, MemoryTarget } from '../src/memory/types.ts'
import { cachedEmbedder } from './cached-embedder.ts'
import { loadLocomo, type LocomoConversation } from './locomo.ts'

const dataDir = resolve(dirname(fileURLToPath(import.meta.url)), '../../shared/data/locomo')
export const FILES = ['conv-26', 'conv-30', 'conv-41']
/** The embedder of both benches; its `stats` count cache hits and texts sent to the model. */
export const model = cachedEmbedder(localEmbedder())

/** `v` scaled to length 1 (a zero vector stays zero). */
export function unit(v: Float32Array): Float32Array {
  let n = 0
  for (const x of v) n += x * x
  n = Math.sqrt(n) || 1
  return v.map(x => x / n)
}

/** Unit vectors of `texts`, embedded 64 at a time. */
export async function embedAll(texts: string[]): Promise<Float32Array[]> {
  const out: Float32Array[] = []
  for (let i = 0; i < texts.length; i += 64) {
    const { embeddings } = await model.doEmbed({ values: texts.slice(i, i + 64) })
    for (const e of embeddings) out.push(unit(Float32Array.from(e)))
  }
  return out
}

export function dot(a: Float32Array, b: Float32Array): number { let s = 0; for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!; return s }

/** One conversation of `file` imported into its own scope of an in-memory store, with its active records. */
export async function loadConversation(file: string, eventTime: boolean): Promise<{ conversation: LocomoConversation; adapter: MemoryStoreAdapter; target: MemoryTarget; records: MemoryRecord[] }> {
  const conversation = loadLocomo(join(dataDir, `${file}.json`), file, { eventTime })
  const adapter: MemoryStoreAdapter = await inMemoryMemoryStore().create({ store: 'locomo', agent: 'bench', writable: true })
  const target: MemoryTarget = { store: 'locomo', scope: { user: conversation.id } }
  for (const input of conversation.records) await adapter.append(target, input, { audit: { via: 'import' } })
  const records = (await adapter.export(target)).filter(r => r.status === 'active')
  return { conversation, adapter, target, records }
}

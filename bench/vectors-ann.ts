/**
 * `npm run bench:vectors-ann [-- 10000 100000]`: what an approximate index (HNSW, usearch's
 * `Index`) would buy over the exact scan, at the given scope sizes (default 10,000), 512
 * dimensions: build time, search time and recall@10 against the exact top 10, with usearch's
 * exact SIMD scan (`exactSearch`, what `createVectorIndex` uses with the kernel) in the same run.
 * Vectors are clustered like sentence embeddings (2,000 topic centres, each vector a centre plus
 * noise, unit length); queries are perturbed data vectors. Build uses 2 threads, search 1.
 * The decision it informs is in docs/search-and-recall.md, "Vector search at scale".
 */
import { loadavg } from 'node:os'
import { createRequire } from 'node:module'
import { xorshift32 } from './random.ts'

interface Usearch {
  Index: new (config: { dimensions: number; metric: unknown; quantization: unknown; connectivity: number; expansion_add: number; expansion_search: number }) => {
    add(keys: BigUint64Array, vectors: Float32Array, threads?: number): void
    search(vector: Float32Array, k: number, threads: number): { keys: BigUint64Array }
  }
  exactSearch(dataset: Float32Array, queries: Float32Array, dimensions: number, count: number, metric: unknown, threads?: number): { keys: BigUint64Array }
  MetricKind: { IP: unknown }
  ScalarKind: { F32: unknown; I8: unknown }
}

const usearch = createRequire(import.meta.url)('usearch') as Usearch
const D = 512
const random = xorshift32(11)
const gauss = () => (random() + random() + random() + random() + random() + random()) / 0.707

function normalize(matrix: Float32Array, row: number): void {
  let norm = 0
  for (let d = 0; d < D; d++) norm += matrix[row * D + d]! ** 2
  const scale = 1 / Math.sqrt(norm)
  for (let d = 0; d < D; d++) matrix[row * D + d]! *= scale
}

function clustered(count: number): Float32Array {
  const centres = Float32Array.from({ length: 2000 * D }, gauss)
  const matrix = new Float32Array(count * D)
  for (let row = 0; row < count; row++) {
    const centre = Math.floor((random() + 0.5) * 2000) % 2000
    for (let d = 0; d < D; d++) matrix[row * D + d] = centres[centre * D + d]! + 0.8 * gauss()
    normalize(matrix, row)
  }
  return matrix
}

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))]!
const sizes = process.argv.slice(2).map(Number).filter(n => n > 0)
console.log(`load average at start: ${loadavg().map(v => v.toFixed(2)).join(' ')}`)
console.log('| vectors | index | build s | search min / p50 ms | recall@10 vs exact | exact scan min / p50 ms |')
console.log('| --- | --- | --- | --- | --- | --- |')
for (const count of sizes.length > 0 ? sizes : [10_000]) {
  const matrix = clustered(count)
  const queries = new Float32Array(50 * D)
  for (let q = 0; q < 50; q++) {
    const source = Math.floor((random() + 0.5) * count) % count
    for (let d = 0; d < D; d++) queries[q * D + d] = matrix[source * D + d]! + 0.2 * gauss() / Math.sqrt(D) * 10
    normalize(queries, q)
  }
  const keys = BigUint64Array.from({ length: count }, (_, i) => BigInt(i))
  for (const [label, quantization] of [['HNSW f32', usearch.ScalarKind.F32], ['HNSW i8', usearch.ScalarKind.I8]] as const) {
    const index = new usearch.Index({ dimensions: D, metric: usearch.MetricKind.IP, quantization, connectivity: 16, expansion_add: 128, expansion_search: 64 })
    const started = performance.now()
    index.add(keys, matrix, 2)
    const buildS = (performance.now() - started) / 1000
    const annTimes: number[] = []
    const exactTimes: number[] = []
    let found = 0
    for (let q = 0; q < 50; q++) {
      // A copy: usearch reads a typed array from the start of its buffer, whatever its byteOffset.
      const query = queries.slice(q * D, (q + 1) * D)
      let begun = performance.now()
      const approximate = new Set(Array.from(index.search(query, 10, 1).keys, Number))
      annTimes.push(performance.now() - begun)
      begun = performance.now()
      const exact = Array.from(usearch.exactSearch(matrix, query, D, 10, usearch.MetricKind.IP, 1).keys, Number)
      exactTimes.push(performance.now() - begun)
      found += exact.filter(row => approximate.has(row)).length
    }
    console.log(`| ${count} | ${label} (M 16, ef 128 / 64) | ${buildS.toFixed(1)} | ${Math.min(...annTimes).toFixed(2)} / ${percentile(annTimes, 0.5).toFixed(2)} | ${(found / 500).toFixed(3)} | ${Math.min(...exactTimes).toFixed(2)} / ${percentile(exactTimes, 0.5).toFixed(2)} |`)
  }
}

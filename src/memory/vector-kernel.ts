/**
 * The native exact vector scan of hybrid search: usearch's `exactSearch` (Unum, Apache-2.0; SIMD
 * dot products, prebuilt binaries for Linux x64 / arm64 and macOS, Node 20 from 2.25) bound as an
 * {@link ExactVectorKernel}. `usearch` is an optional peer dependency: where it is not installed
 * (or its binary does not load here), the scan stays in JavaScript with the same results.
 */
import { importOptional } from '../optional-dependency.ts'
import type { ExactVectorKernel } from '../search/vectors.ts'

interface UsearchModule {
  exactSearch(dataset: Float32Array, queries: Float32Array, dimensions: number, count: number, metric: unknown, threads?: number): { keys: BigUint64Array; distances: Float32Array }
  MetricKind: { IP: unknown }
}

/** Where usearch is resolved from (tests); this module by default. */
export interface VectorKernelOptions {
  from?: string | URL
}

let loading: Promise<ExactVectorKernel | undefined> | undefined

/**
 * The usearch kernel, or `undefined` when the package is missing or fails to load (never throws:
 * the JavaScript scan is the fallback). Loaded once per process for the default `from`. The scan
 * runs on one thread: it is one request's work on a shared server.
 */
export function loadVectorKernel(options: VectorKernelOptions = {}): Promise<ExactVectorKernel | undefined> {
  if (options.from !== undefined) return load(options.from)
  return loading ??= load(undefined)
}

async function load(from: string | URL | undefined): Promise<ExactVectorKernel | undefined> {
  let usearch: UsearchModule
  try {
    const loaded = await importOptional<UsearchModule & { default?: UsearchModule }>('usearch', 'the native vector scan', from === undefined ? {} : { from })
    usearch = typeof loaded.exactSearch === 'function' ? loaded : loaded.default!
    if (typeof usearch?.exactSearch !== 'function') return undefined
  }
  catch {
    return undefined
  }
  const metric = usearch.MetricKind.IP
  return {
    topK(matrix, count, dimensions, query, k) {
      // exactSearch reads a typed array from the start of its buffer, whatever its byteOffset (usearch 2.25.3): views are copied first.
      const rows = matrix.byteOffset === 0 ? matrix : matrix.slice()
      const probe = query.byteOffset === 0 ? query : query.slice()
      const { keys, distances } = usearch.exactSearch(rows.length === count * dimensions ? rows : rows.subarray(0, count * dimensions), probe, dimensions, k, metric, 1)
      // Inner-product distance is 1 - dot.
      const scores = new Float64Array(distances.length)
      for (let i = 0; i < distances.length; i++) scores[i] = 1 - distances[i]!
      return { rows: keys, scores }
    },
  }
}

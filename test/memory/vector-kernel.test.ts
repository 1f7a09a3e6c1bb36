import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { loadVectorKernel } from '../../src/memory/vector-kernel.ts'
import { createVectorIndex, normalizeVector, type ExactVectorKernel } from '../../src/search/vectors.ts'

const folders: string[] = []
afterAll(() => { for (const dir of folders) rmSync(dir, { recursive: true, force: true }) })

const cosine = (a: readonly number[], b: readonly number[]) => {
  let dot = 0, na = 0, nb = 0
  for (let i = 0; i < a.length; i++) { dot += a[i]! * b[i]!; na += a[i]! * a[i]!; nb += b[i]! * b[i]! }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb)
}

const vector = (dims: number) => fc.array(fc.float({ min: -10, max: 10, noNaN: true, noDefaultInfinity: true }), { minLength: dims, maxLength: dims })

/** The exact top `k` of `vectors` (ids `r<n>`) that `accept` takes, by cosine similarity to `query`. */
const exactTop = (vectors: readonly number[][], query: readonly number[], k: number, accept: (id: string) => boolean) =>
  vectors.map((v, i) => ({ id: `r${i}`, similarity: cosine(v, query) })).filter(match => accept(match.id)).sort((a, b) => b.similarity - a.similarity).slice(0, k)

async function usearchKernel(): Promise<ExactVectorKernel> {
  const kernel = await loadVectorKernel()
  // usearch is a devDependency: the kernel must load here.
  expect(kernel).toBeDefined()
  return kernel!
}

describe('native exact vector scan (usearch)', () => {
  it('an index scanned by usearch returns the exact top k of the accepted vectors', async () => {
    const kernel = await usearchKernel()
    fc.assert(fc.property(fc.array(vector(16), { minLength: 1, maxLength: 150 }), vector(16), fc.integer({ min: 1, max: 20 }), fc.array(fc.boolean(), { minLength: 150, maxLength: 150 }), (vectors, query, k, rejected) => {
      const index = createVectorIndex(16, { kernel, kernelFrom: 1 })
      vectors.forEach((v, i) => index.set(`r${i}`, v))
      const accept = (id: string) => !rejected[Number(id.slice(1))]
      const got = index.search(query, k, accept)
      const expected = exactTop(vectors, query, k, accept)
      expect(got).toHaveLength(expected.length)
      got.forEach((match, i) => {
        expect(accept(match.id)).toBe(true)
        expect(match.similarity).toBeCloseTo(expected[i]!.similarity, 4)
        expect(match.similarity).toBeCloseTo(cosine(vectors[Number(match.id.slice(1))]!, query), 4)
      })
    }), { numRuns: 200 })
  })

  it('an index over a base array plus vectors set after it, scanned by usearch, returns the exact top k of the accepted vectors', async () => {
    const kernel = await usearchKernel()
    fc.assert(fc.property(fc.array(vector(16), { minLength: 1, maxLength: 150 }), fc.integer({ min: 0, max: 150 }), vector(16), fc.integer({ min: 1, max: 20 }), fc.array(fc.boolean(), { minLength: 150, maxLength: 150 }), (vectors, split, query, k, rejected) => {
      const inBase = Math.min(split, vectors.length)
      const data = new Float32Array(inBase * 16)
      for (let i = 0; i < inBase; i++) data.set(normalizeVector(vectors[i]!), i * 16)
      const index = createVectorIndex(16, { kernel, kernelFrom: 1, base: { ids: vectors.slice(0, inBase).map((_, i) => `r${i}`), data } })
      for (let i = inBase; i < vectors.length; i++) index.set(`r${i}`, vectors[i]!)
      const accept = (id: string) => !rejected[Number(id.slice(1))]
      const got = index.search(query, k, accept)
      const expected = exactTop(vectors, query, k, accept)
      expect(got).toHaveLength(expected.length)
      got.forEach((match, i) => {
        expect(accept(match.id)).toBe(true)
        expect(match.similarity).toBeCloseTo(expected[i]!.similarity, 4)
      })
    }), { numRuns: 200 })
  })

  it('a filter that rejects every candidate usearch returned still gets the best accepted vectors', async () => {
    const kernel = await usearchKernel()
    const index = createVectorIndex(2, { kernel, kernelFrom: 1 })
    // 300 vectors near the query, then three far ones: only the far ones are accepted.
    for (let i = 0; i < 300; i++) index.set(`near${i}`, [1, i / 1000])
    index.set('far1', [0.6, 0.8])
    index.set('far2', [0, 1])
    index.set('far3', [-1, 0])
    const got = index.search([1, 0], 2, id => id.startsWith('far'))
    expect(got.map(match => match.id)).toEqual(['far1', 'far2'])
    expect(got[0]!.similarity).toBeCloseTo(0.6, 6)
  })

  it('below kernelFrom vectors the JavaScript scan answers, and ties go to the vector added first', async () => {
    const kernel = await usearchKernel()
    let calls = 0
    const counting: ExactVectorKernel = { topK: (...args) => { calls++; return kernel.topK(...args) } }
    const index = createVectorIndex(2, { kernel: counting, kernelFrom: 4 })
    for (const id of ['first', 'second', 'third']) index.set(id, [1, 1])
    expect(index.search([1, 1], 2).map(match => match.id)).toEqual(['first', 'second'])
    expect(calls).toBe(0)
    index.set('fourth', [1, 0])
    expect(index.search([1, 0], 1).map(match => match.id)).toEqual(['fourth'])
    expect(calls).toBe(1)
  })

  it('a query and rows held in views of larger buffers rank as their own copies do', async () => {
    const kernel = await usearchKernel()
    const buffer = new Float32Array([9, 9, 1, 0, 0, 1, 0.6, 0.8])
    const queries = new Float32Array([1, 0, 0, 1])
    const found = kernel.topK(buffer.subarray(2), 3, 2, queries.subarray(2), 1)
    expect(Array.from(found.rows, Number)).toEqual([1])
    expect(found.scores[0]).toBeCloseTo(1, 6)
  })

  it('where usearch is not installed the kernel is undefined, not an error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-kernel-'))
    folders.push(dir)
    await expect(loadVectorKernel({ from: pathToFileURL(join(dir, 'app.mjs')) })).resolves.toBeUndefined()
  })
})

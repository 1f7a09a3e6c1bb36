/**
 * `npx tsx bench/recall-fusion-folds.ts`: hybrid fusion choices on the LoCoMo dev conversations
 * (protocol of bench/recall.ts) in two folds by conversation (A: conv-26, 150 questions; B:
 * conv-30 + conv-41, 233), so that a choice made on one fold is judged on the other. Without and
 * with event dates (`occurredAt` = the session date). The lexical side is the store's ranking
 * (`adapter.search`, limit 100, what `hybridSearch` fuses); the vector side is exact cosine over
 * `localEmbedder()` vectors from the disk cache (bench/cached-embedder.ts), with `hybridSearch`'s
 * date ordering (records in a period the query names first) when dated. Varied: the embedded text
 * of a record, the query text (as asked, or without its stop-words), RRF k / weight / depth, a
 * score fusion (convex combination of max-normalised BM25F and min-max-normalised cosine), a
 * vector similarity floor, and a pseudo-relevance step on the vector side (the query vector moved
 * toward the vectors of the lexical top m). `--diagnose` prints what each side finds alone and
 * what the default fusion loses.
 */
import { resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { namedPeriods, occurredIn } from '../src/memory/query-dates.ts'
import { ENGLISH_STOP_WORDS } from '../src/search/text.ts'
import type { MemoryRecord } from '../src/memory/types.ts'
import { dot, embedAll, FILES, loadConversation, model, unit } from './locomo-vectors.ts'

const FOLD_OF: Record<string, 'A' | 'B'> = { 'conv-26': 'A', 'conv-30': 'B', 'conv-41': 'B' }

/** The record texts compared (the first is `embeddingText`, what the stores embed). */
const TEXTS: Record<string, (r: MemoryRecord) => string> = {
  'title+content+tags': r => [r.title, r.content, r.tags.length > 0 ? r.tags.join(', ') : undefined].filter(Boolean).join('\n'),
  'content': r => r.content,
  'tags: content': r => `${r.tags.join(', ')}: ${r.content}`,
}

/** The query texts compared: as asked, and without the tokenizer's stop-words (question words, auxiliaries). */
const QUERIES: Record<string, (q: string) => string> = {
  'as asked': q => q,
  'stop-words out': q => q.split(/\s+/).filter(w => !ENGLISH_STOP_WORDS.has(w.toLowerCase().replace(/[^\p{L}\p{N}']/gu, '').replace(/'s$/, ''))).join(' ') || q,
}

interface Question { evidence: Set<string>; lexical: MemoryRecord[]; lexScores: number[]; vectors: Record<string, Float32Array>; question: string; fold: 'A' | 'B' }
interface Conversation { records: MemoryRecord[]; questions: Question[]; texts: Record<string, Float32Array[]> }

async function load(eventTime: boolean): Promise<Conversation[]> {
  const out: Conversation[] = []
  for (const file of FILES) {
    const { conversation: c, adapter, target, records } = await loadConversation(file, eventTime)
    const texts: Record<string, Float32Array[]> = {}
    for (const [name, fn] of Object.entries(TEXTS)) texts[name] = await embedAll(records.map(fn))
    const queryVectors: Record<string, Float32Array[]> = {}
    for (const [name, fn] of Object.entries(QUERIES)) queryVectors[name] = await embedAll(c.questions.map(q => fn(q.question)))
    const questions: Question[] = []
    for (const [i, q] of c.questions.entries()) {
      const hits = await adapter.search(target, { query: q.question, limit: 100 })
      const vectors = Object.fromEntries(Object.keys(QUERIES).map(name => [name, queryVectors[name]![i]!]))
      questions.push({ evidence: q.evidence, lexical: hits.map(h => h.record), lexScores: hits.map(h => h.score), vectors, question: q.question, fold: FOLD_OF[file]! })
    }
    out.push({ records, questions, texts })
  }
  return out
}


/** One fusion choice. */
export interface Fusion {
  mode: 'rrf' | 'score' | 'lexical' | 'vector'
  k: number
  lexicalDepth: number
  vectorDepth: number
  vectorWeight: number
  /** Score fusion: weight of the cosine side (the lexical side gets 1 − alpha). */
  alpha: number
  text: string
  query: string
  /** Vector candidates under this cosine similarity are dropped. */
  floor: number
  /** Pseudo-relevance on the vector side: the query vector plus `prfWeight` × the mean vector of the lexical top `prfRecords`. */
  prfRecords: number
  prfWeight: number
  /** The vector side's date ordering (records in a period the query names first). */
  dateOrder: boolean
  /** The date ordering reads `createdAt` for a record without `occurredAt` (as `hybridSearch`). */
  createdAtDates?: boolean
  /** A second embedded text: a record's similarity is the greater of its two texts'. */
  secondText?: string
  /** A second query text: the query vector is the mean of the two. */
  secondQuery?: string
  /** Context: a record's similarity plus this × the greatest similarity among the other records of its event day. */
  dayContext?: number
}

const DEFAULT: Fusion = { mode: 'rrf', k: 10, lexicalDepth: 100, vectorDepth: 100, vectorWeight: 0.75, alpha: 0.4, text: 'title+content+tags', query: 'as asked', floor: 0, prfRecords: 0, prfWeight: 0, dateOrder: true, createdAtDates: true }

function vectorRanking(c: Conversation, q: Question, f: Fusion): Array<{ record: MemoryRecord; similarity: number }> {
  const vectors = c.texts[f.text]!
  let qv = q.vectors[f.query]!
  if (f.prfRecords > 0) {
    const index = new Map(c.records.map((r, i) => [r.id, i]))
    const moved = Float32Array.from(qv)
    for (const record of q.lexical.slice(0, f.prfRecords)) {
      const v = vectors[index.get(record.id)!]!
      for (let d = 0; d < moved.length; d++) moved[d]! += (f.prfWeight / f.prfRecords) * v[d]!
    }
    qv = unit(moved)
  }
  if (f.secondQuery) {
    const other = q.vectors[f.secondQuery]!
    qv = unit(qv.map((x, d) => x + other[d]!))
  }
  const second = f.secondText ? c.texts[f.secondText]! : undefined
  const sims = c.records.map((record, i) => ({ record, similarity: second ? Math.max(dot(vectors[i]!, qv), dot(second[i]!, qv)) : dot(vectors[i]!, qv), i }))
  if (f.dayContext) {
    const day = (r: MemoryRecord) => (r.occurredAt ?? r.createdAt).slice(0, 10)
    const best = new Map<string, [number, number]>()
    for (const x of sims) {
      const b = best.get(day(x.record)) ?? [-1, -1]
      if (x.similarity > b[0]) best.set(day(x.record), [x.similarity, b[0]])
      else if (x.similarity > b[1]) best.set(day(x.record), [b[0], x.similarity])
    }
    const raw = sims.map(x => x.similarity)
    sims.forEach((x, n) => { const b = best.get(day(x.record))!; x.similarity = raw[n]! + f.dayContext! * Math.max(0, b[0] === raw[n] ? b[1] : b[0]) })
  }
  sims.sort((a, b) => b.similarity - a.similarity || a.i - b.i)
  const floor = Math.max(f.floor, 1e-12)
  let ranked = sims.filter(x => x.similarity >= floor).slice(0, f.vectorDepth)
  const periods = f.dateOrder ? namedPeriods(q.question) : []
  if (periods.length > 0) {
    const when = (r: MemoryRecord) => f.createdAtDates ? { occurredAt: r.occurredAt ?? r.createdAt } : r
    const first = sims.filter(x => x.similarity >= floor && occurredIn(when(x.record), periods)).slice(0, f.vectorDepth)
    const ids = new Set(first.map(x => x.record.id))
    ranked = [...first, ...ranked.filter(x => !ids.has(x.record.id))].slice(0, f.vectorDepth)
  }
  return ranked
}

function fused(c: Conversation, q: Question, f: Fusion): MemoryRecord[] {
  const lexical = q.lexical.slice(0, f.lexicalDepth)
  if (f.mode === 'lexical') return lexical
  const vector = vectorRanking(c, q, f)
  if (f.mode === 'vector') return vector.map(x => x.record)
  const score = new Map<string, { record: MemoryRecord; s: number; first: number }>()
  let seen = 0
  if (f.mode === 'score') {
    const top = q.lexScores[0] || 1
    const max = vector[0]?.similarity ?? 1
    const min = vector.at(-1)?.similarity ?? 0
    lexical.forEach((record, i) => score.set(record.id, { record, s: (1 - f.alpha) * (q.lexScores[i]! / top), first: seen++ }))
    for (const x of vector) {
      const s = f.alpha * (max > min ? (x.similarity - min) / (max - min) : 1)
      const e = score.get(x.record.id)
      if (e) e.s += s
      else score.set(x.record.id, { record: x.record, s, first: seen++ })
    }
  }
  else {
    lexical.forEach((record, rank) => score.set(record.id, { record, s: 1 / (f.k + rank + 1), first: seen++ }))
    vector.forEach((x, rank) => {
      const e = score.get(x.record.id)
      if (e) e.s += f.vectorWeight / (f.k + rank + 1)
      else score.set(x.record.id, { record: x.record, s: f.vectorWeight / (f.k + rank + 1), first: seen++ })
    })
  }
  return [...score.values()].sort((a, b) => b.s - a.s || a.first - b.first).map(e => e.record)
}

const cites = (q: Question) => (r: MemoryRecord) => (r.metadata.evidence as string[]).some(id => q.evidence.has(id))

/** Hits at 5 and 10 per fold, and MRR@10 over all questions. */
export interface FoldHits { A5: number; A10: number; B5: number; B10: number; rr: number; n: number; nA: number; nB: number }

function evaluate(convs: Conversation[], f: Fusion): FoldHits {
  const h: FoldHits = { A5: 0, A10: 0, B5: 0, B10: 0, rr: 0, n: 0, nA: 0, nB: 0 }
  for (const c of convs) {
    for (const q of c.questions) {
      const rank = fused(c, q, f).slice(0, 10).findIndex(cites(q))
      h.n++
      h[q.fold === 'A' ? 'nA' : 'nB']++
      if (rank === -1) continue
      h.rr += 1 / (rank + 1)
      h[`${q.fold}10`]++
      if (rank < 5) h[`${q.fold}5`]++
    }
  }
  return h
}

const f3 = (v: number) => v.toFixed(3)
function row(name: string, h: FoldHits, base?: FoldHits): string {
  const d = (key: 'A5' | 'A10' | 'B5' | 'B10') => base ? ` (${h[key] - base[key] >= 0 ? '+' : ''}${h[key] - base[key]})` : ''
  return `| ${name} | ${f3(h.A5 / h.nA)}${d('A5')} / ${f3(h.A10 / h.nA)}${d('A10')} | ${f3(h.B5 / h.nB)}${d('B5')} / ${f3(h.B10 / h.nB)}${d('B10')} | ${f3((h.A5 + h.B5) / h.n)} / ${f3((h.A10 + h.B10) / h.n)} / ${f3(h.rr / h.n)} |`
}

function diagnose(label: string, convs: Conversation[]): void {
  let n = 0, both = 0, lexicalOnly = 0, vectorOnly = 0, lostByFusion = 0, wonByFusion = 0, lostLexical = 0, lostVector = 0
  for (const c of convs) {
    for (const q of c.questions) {
      n++
      const hit = cites(q)
      const l = q.lexical.slice(0, 10).some(hit)
      const v = vectorRanking(c, q, DEFAULT).slice(0, 10).some(x => hit(x.record))
      const fusedHit = fused(c, q, DEFAULT).slice(0, 10).some(hit)
      if (l && v) both++
      else if (l) lexicalOnly++
      else if (v) vectorOnly++
      if ((l || v) && !fusedHit) lostByFusion++
      if (l && !v && !fusedHit) lostLexical++
      if (v && !l && !fusedHit) lostVector++
      if (!l && !v && fusedHit) wonByFusion++
    }
  }
  console.log(`${label}: ${n} questions; top 10 of both sides ${both}, lexical only ${lexicalOnly}, vector only ${vectorOnly}; fusion's top 10 misses ${lostByFusion} that one side's top 10 held (${lostLexical} lexical only, ${lostVector} vector only), finds ${wonByFusion} that neither did`)
}

/** The variants measured: each is the default with a few fields changed. */
export const VARIANTS: Array<[string, Partial<Fusion>]> = [
  ['lexical alone', { mode: 'lexical' }],
  ['vector alone', { mode: 'vector' }],
  ['vector alone, "tags: content" embedded', { mode: 'vector', text: 'tags: content' }],
  ['vector alone, question without stop-words', { mode: 'vector', query: 'stop-words out' }],
  ['"tags: content" embedded', { text: 'tags: content' }],
  ['content embedded', { text: 'content' }],
  ['question without stop-words', { query: 'stop-words out' }],
  ['no date ordering on the vector side', { dateOrder: false }],
  ['date ordering from occurredAt only (none for a record without it)', { createdAtDates: false }],
  ...[5, 20].map((k): [string, Partial<Fusion>] => [`RRF k ${k}`, { k }]),
  ...[0.5, 0.6, 1].map((vectorWeight): [string, Partial<Fusion>] => [`vector weight ${vectorWeight}`, { vectorWeight }]),
  ...[20, 50].map((d): [string, Partial<Fusion>] => [`depth ${d} / ${d}`, { lexicalDepth: d, vectorDepth: d }]),
  ...[30, 50].map((d): [string, Partial<Fusion>] => [`vector depth ${d}`, { vectorDepth: d }]),
  ...[0.2, 0.3, 0.4].map((floor): [string, Partial<Fusion>] => [`vector floor ${floor}`, { floor }]),
  ...[0.3, 0.4, 0.5, 0.6].map((alpha): [string, Partial<Fusion>] => [`score fusion, cosine ${alpha}`, { mode: 'score', alpha }]),
  ...[0.3, 0.4, 0.5].map((alpha): [string, Partial<Fusion>] => [`score fusion, cosine ${alpha}, depth 20`, { mode: 'score', alpha, vectorDepth: 20, lexicalDepth: 20 }]),
  ['vector: greater similarity of title+content+tags and "tags: content"', { secondText: 'tags: content' }],
  ['vector: greater similarity of title+content+tags and content', { secondText: 'content' }],
  ['vector: query as asked and without stop-words, averaged', { secondQuery: 'stop-words out' }],
  ...[0.1, 0.25, 0.5].map((dayContext): [string, Partial<Fusion>] => [`vector: + ${dayContext} × best similarity of the same event day`, { dayContext }]),
  ...[[3, 0.5], [3, 1], [5, 0.5], [5, 1], [10, 1]].map(([m, w]): [string, Partial<Fusion>] => [`vector PRF ${m} records × ${w}`, { prfRecords: m!, prfWeight: w! }]),
]

/** A grid of fusion choices for `--select`: every embedded text × RRF k × vector weight × vector depth, and score fusion × cosine weight × depth. */
function grid(): Array<[string, Partial<Fusion>]> {
  const out: Array<[string, Partial<Fusion>]> = []
  for (const text of Object.keys(TEXTS)) {
    for (const k of [5, 10, 20]) for (const vectorWeight of [0.5, 0.6, 0.75, 1]) for (const vectorDepth of [50, 100]) out.push([`RRF k ${k}, weight ${vectorWeight}, vector depth ${vectorDepth}, ${text}`, { text, k, vectorWeight, vectorDepth }])
    for (const alpha of [0.3, 0.4, 0.5]) for (const depth of [20, 100]) out.push([`score fusion ${alpha}, depth ${depth}, ${text}`, { text, mode: 'score', alpha, vectorDepth: depth, lexicalDepth: depth }])
  }
  return out
}

/** Picks the best grid choice on one fold (recall@10, then recall@5, then the default's order) and reports it on the other. */
function select(convs: Conversation[]): void {
  const scored = grid().map(([name, change]) => ({ name, h: evaluate(convs, { ...DEFAULT, ...change }) }))
  const base = evaluate(convs, DEFAULT)
  for (const [on, other] of [['A', 'B'], ['B', 'A']] as const) {
    const best = [...scored].sort((x, y) => y.h[`${on}10`] - x.h[`${on}10`] || y.h[`${on}5`] - x.h[`${on}5`])[0]!
    console.log(`chosen on ${on}: ${best.name}: ${on} ${best.h[`${on}5`] - base[`${on}5`]} / ${best.h[`${on}10`] - base[`${on}10`]}, on ${other} ${best.h[`${other}5`] - base[`${other}5`]} / ${best.h[`${other}10`] - base[`${other}10`]} questions at 5 / 10 against the default`)
    console.log(row(`  ${best.name}`, best.h, base))
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const extra = process.env.VARIANTS ? JSON.parse(process.env.VARIANTS) as Array<[string, Partial<Fusion>]> : []
  for (const dated of [false, true]) {
    const convs = await load(dated)
    const label = dated ? 'with event dates' : 'without event dates'
    if (process.argv.includes('--diagnose')) { diagnose(label, convs); continue }
    if (process.argv.includes('--select')) { console.log(`\n${label}`); select(convs); continue }
    console.log(`\nLoCoMo dev, ${label}; fold A conv-26, fold B conv-30 + conv-41; (±n) = questions against the default`)
    console.log('| fusion | A r@5 / r@10 | B r@5 / r@10 | all r@5 / r@10 / MRR@10 |')
    console.log('| --- | --- | --- | --- |')
    const base = evaluate(convs, DEFAULT)
    console.log(row('default: RRF k 10, 100 / 100, vector weight 0.75', base))
    for (const [name, change] of [...VARIANTS, ...extra]) console.log(row(name, evaluate(convs, { ...DEFAULT, ...change }), base))
  }
  console.log(`\nembedder cache: ${model.stats.hits} hits, ${model.stats.misses} texts embedded`)
}

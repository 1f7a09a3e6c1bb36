/**
 * `npx tsx bench/recall-loco-folds.ts`: recall choices judged leave-one-conversation-out on the
 * three LoCoMo dev conversations (protocol of bench/recall.ts: `createdAt` = the session date).
 * For each variant: recall@5 / @10 / MRR@10 per conversation against the default hybrid ranking;
 * for each family of variants, the member chosen on two conversations (recall@10, then @5) and
 * read on the third, all three ways. The lexical side is the store's ranking (`adapter.search`,
 * limit 100); the vector side is exact cosine over `localEmbedder()` vectors from the disk cache
 * (bench/cached-embedder.ts) with `hybridSearch`'s date ordering, fused as `hybridSearch` does
 * (RRF k 10, depths 100 / 100, vector weight 0.75). Varied: the embedded text of a record
 * (with its neighbouring records of the same session: the records next to it in creation order
 * with the same event day), the query text (date words out), and a share of a neighbour's score
 * (on the vector side or the fused ranking). `--misses` classifies the default's misses at 10.
 */
import { namedPeriods, occurredIn } from '../src/memory/query-dates.ts'
import type { MemoryRecord } from '../src/memory/types.ts'
import { embeddingText } from '../src/memory/vectors-store.ts'
import { dot, embedAll, FILES, loadConversation, model, unit } from './locomo-vectors.ts'

interface Question { question: string; evidence: Set<string>; lexical: MemoryRecord[]; vectors: Record<string, Float32Array> }
interface Conversation { id: string; records: MemoryRecord[]; position: Map<string, number>; texts: Record<string, Float32Array[]>; questions: Question[] }

const day = (r: MemoryRecord) => (r.occurredAt ?? r.createdAt).slice(0, 10)

/** Indexes of the records next to `n` (up to `before` earlier, `after` later) of the same event day, nearest first; `sameTag`: only those sharing a tag. */
function neighbours(records: readonly MemoryRecord[], n: number, before: number, after: number, sameTag = false): number[] {
  const out: number[] = []
  const ok = (m: number) => m >= 0 && m < records.length && day(records[m]!) === day(records[n]!) && (!sameTag || records[m]!.tags.some(t => records[n]!.tags.includes(t)))
  for (let d = 1; d <= Math.max(before, after); d++) {
    if (d <= before && ok(n - d)) out.push(n - d)
    if (d <= after && ok(n + d)) out.push(n + d)
  }
  return out
}

const DATE_WORDS = /\b(?:on|in|of|during|around|since|before|after)?\s*(?:(?:\d{1,2}(?:st|nd|rd|th)?\s+)?(?:january|february|march|april|may|june|july|august|september|october|november|december)(?:\s+\d{1,2}(?:st|nd|rd|th)?)?,?(?:\s+\d{4})?|\d{4})\b/gi

/** The record texts embedded: the default, and with neighbouring records of the same session after it. */
const TEXTS: Record<string, (records: readonly MemoryRecord[], n: number) => string> = {
  'default': (records, n) => embeddingText(records[n]!),
  'ctx prev 1': (records, n) => [embeddingText(records[n]!), ...neighbours(records, n, 1, 0).map(m => records[m]!.content)].join('\n'),
  'ctx prev 1 + next 1': (records, n) => [embeddingText(records[n]!), ...neighbours(records, n, 1, 1).map(m => records[m]!.content)].join('\n'),
  'ctx prev 2': (records, n) => [embeddingText(records[n]!), ...neighbours(records, n, 2, 0).map(m => records[m]!.content)].join('\n'),
  'ctx prev 1 same tag': (records, n) => [embeddingText(records[n]!), ...neighbours(records, n, 1, 0, true).map(m => records[m]!.content)].join('\n'),
}
const QUERIES: Record<string, (q: string) => string> = {
  'as asked': q => q,
  'date words out': q => q.replace(DATE_WORDS, ' ').replace(/\s+/g, ' ').trim() || q,
}

async function load(): Promise<Conversation[]> {
  const out: Conversation[] = []
  for (const file of FILES) {
    const { conversation, adapter, target, records } = await loadConversation(file, false)
    const texts: Record<string, Float32Array[]> = {}
    for (const [name, text] of Object.entries(TEXTS)) texts[name] = await embedAll(records.map((_, n) => text(records, n)))
    const queryVectors: Record<string, Float32Array[]> = {}
    for (const [name, text] of Object.entries(QUERIES)) queryVectors[name] = await embedAll(conversation.questions.map(q => text(q.question)))
    const questions: Question[] = []
    for (const [i, q] of conversation.questions.entries()) {
      const hits = await adapter.search(target, { query: q.question, limit: 100 })
      questions.push({ question: q.question, evidence: q.evidence, lexical: hits.map(h => h.record), vectors: Object.fromEntries(Object.keys(QUERIES).map(name => [name, queryVectors[name]![i]!])) })
    }
    out.push({ id: file, records, position: new Map(records.map((r, n) => [r.id, n])), texts, questions })
  }
  return out
}

/** One ranking choice. */
interface Choice {
  text: string
  query: string
  k: number
  vectorWeight: number
  /** Vector side: a record's similarity plus this × the greatest similarity of its neighbours (`span` each way, same session). */
  vectorNeighbour: number
  /** Fused ranking: a record's score plus this × the greatest fused score of its neighbours. */
  fusedNeighbour: number
  /** Lexical side: as fusedNeighbour, on 1 / (k + lexical rank) before fusion. */
  lexicalNeighbour: number
  span: number
  sameTag: boolean
  /** Vector side: mean of the record's own vector and `contextVector` × its neighbours' mean (no re-embedding). */
  contextVector: number
  /** Neighbours on each side for `contextVector` (default: `span`). */
  contextSpan?: number
  /** Spread: a neighbour's share never lifts it above the record it came from. */
  capped: boolean
  /** The lexical ranking alone (no vector side), before the spread. */
  lexicalOnly: boolean
}
const DEFAULT: Choice = { text: 'default', query: 'as asked', k: 10, vectorWeight: 0.75, vectorNeighbour: 0, fusedNeighbour: 0, lexicalNeighbour: 0, span: 1, sameTag: false, contextVector: 0, capped: false, lexicalOnly: false }

function vectorRanking(c: Conversation, q: Question, f: Choice): MemoryRecord[] {
  const vectors = c.texts[f.text]!
  const qv = q.vectors[f.query]!
  let sim = c.records.map((_, n) => dot(vectors[n]!, qv))
  if (f.contextVector > 0) {
    sim = c.records.map((_, n) => {
      const around = neighbours(c.records, n, f.contextSpan ?? f.span, f.contextSpan ?? f.span, f.sameTag)
      if (around.length === 0) return sim[n]!
      const v = Float32Array.from(vectors[n]!)
      for (const m of around) for (let d = 0; d < v.length; d++) v[d]! += (f.contextVector / around.length) * vectors[m]![d]!
      return dot(unit(v), qv)
    })
  }
  if (f.vectorNeighbour > 0) {
    const raw = sim
    sim = raw.map((s, n) => s + f.vectorNeighbour * Math.max(0, ...neighbours(c.records, n, f.span, f.span, f.sameTag).map(m => raw[m]!)))
  }
  const order = c.records.map((record, n) => ({ record, s: sim[n]!, n })).filter(x => x.s > 0).sort((a, b) => b.s - a.s || a.n - b.n)
  let ranked = order.slice(0, 100)
  const periods = namedPeriods(q.question)
  if (periods.length > 0) {
    const first = order.filter(x => occurredIn({ occurredAt: x.record.occurredAt ?? x.record.createdAt }, periods)).slice(0, 100)
    const ids = new Set(first.map(x => x.record.id))
    ranked = [...first, ...ranked.filter(x => !ids.has(x.record.id))].slice(0, 100)
  }
  return ranked.map(x => x.record)
}

function spread(c: Conversation, score: Map<string, number>, share: number, f: Choice): Map<string, number> {
  if (share === 0) return score
  const out = new Map(score)
  for (const [id, s] of score) {
    for (const m of neighbours(c.records, c.position.get(id)!, f.span, f.span, f.sameTag)) {
      const other = c.records[m]!.id
      const lifted = (score.get(other) ?? 0) + share * s
      out.set(other, Math.max(out.get(other) ?? 0, f.capped ? Math.min(lifted, Math.max(score.get(other) ?? 0, s * 0.999999)) : lifted))
    }
  }
  return out
}

function ranking(c: Conversation, q: Question, f: Choice): MemoryRecord[] {
  const lexical = new Map<string, number>()
  q.lexical.forEach((record, rank) => lexical.set(record.id, 1 / (f.k + rank + 1)))
  const score = spread(c, lexical, f.lexicalNeighbour, f)
  if (!f.lexicalOnly) vectorRanking(c, q, f).forEach((record, rank) => score.set(record.id, (score.get(record.id) ?? 0) + f.vectorWeight / (f.k + rank + 1)))
  const final = spread(c, score, f.fusedNeighbour, f)
  // Ties: the order the fusion met them in (lexical order, then vector order, then spread), as hybridSearch's stable sort.
  return [...final.entries()].sort((a, b) => b[1] - a[1]).map(([id]) => c.records[c.position.get(id)!]!)
}

const cites = (q: Question) => (r: MemoryRecord) => (r.metadata.evidence as string[]).some(id => q.evidence.has(id))

interface Hits { n: number; at5: number; at10: number; rr: number }
function evaluate(c: Conversation, f: Choice): Hits {
  const h: Hits = { n: 0, at5: 0, at10: 0, rr: 0 }
  for (const q of c.questions) {
    h.n++
    const rank = ranking(c, q, f).slice(0, 10).findIndex(cites(q))
    if (rank === -1) continue
    h.at10++
    if (rank < 5) h.at5++
    h.rr += 1 / (rank + 1)
  }
  return h
}

const f3 = (v: number) => v.toFixed(3)
const signed = (v: number) => `${v >= 0 ? '+' : ''}${v}`
function cell(h: Hits, base?: Hits): string {
  const d = base ? ` (${signed(h.at5 - base.at5)} / ${signed(h.at10 - base.at10)})` : ''
  return `${f3(h.at5 / h.n)} / ${f3(h.at10 / h.n)} / ${f3(h.rr / h.n)}${d}`
}
function total(hs: Hits[]): Hits {
  return hs.reduce((a, h) => ({ n: a.n + h.n, at5: a.at5 + h.at5, at10: a.at10 + h.at10, rr: a.rr + h.rr }), { n: 0, at5: 0, at10: 0, rr: 0 })
}

/** Families of variants: a family's member is chosen on two conversations and read on the third. */
const FAMILIES: Record<string, Array<[string, Partial<Choice>]>> = {
  'contextual embedding (neighbours\' text embedded after the record\'s)': Object.keys(TEXTS).filter(t => t !== 'default').map(text => [text, { text }]),
  'query: date words out': [['date words out', { query: 'date words out' }]],
  'vector side: + share × best neighbour similarity': [0.1, 0.25, 0.5].flatMap(w => [1, 2].map((span): [string, Partial<Choice>] => [`× ${w}, span ${span}`, { vectorNeighbour: w, span }])),
  'vector side: record vector + share × neighbours\' mean vector': [0.25, 0.5, 1].flatMap(w => [1, 2].map((span): [string, Partial<Choice>] => [`× ${w}, span ${span}`, { contextVector: w, span }])),
  'fused: + share × best neighbour score': [0.1, 0.2, 0.3, 0.5].flatMap(w => [1, 2].map((span): [string, Partial<Choice>] => [`× ${w}, span ${span}`, { fusedNeighbour: w, span }])),
  'fused: + share × best neighbour score, wider': [0.7, 1].flatMap(w => [1, 2].map((span): [string, Partial<Choice>] => [`× ${w}, span ${span}`, { fusedNeighbour: w, span }])),
  'fused: + share × best neighbour score, capped at the source': [0.3, 0.5, 0.7, 1].flatMap(w => [1, 2].map((span): [string, Partial<Choice>] => [`× ${w}, span ${span}, capped`, { fusedNeighbour: w, span, capped: true }])),
  'vector context vector, wider': [1.5, 2].map((w): [string, Partial<Choice>] => [`× ${w}, span 1`, { contextVector: w }]),
  'vector context × 1 and fused share': [0.2, 0.3, 0.5].map((w): [string, Partial<Choice>] => [`context × 1 + fused × ${w}, span 1`, { contextVector: 1, fusedNeighbour: w }]),
  'fused share 0.5, span 2, and the neighbours\' mean vector (span 1)': [0, 0.25, 0.5, 1].map((w): [string, Partial<Choice>] => [`context × ${w}`, { fusedNeighbour: 0.5, span: 2, contextVector: w, contextSpan: 1 }]),
  'fused: + share × best neighbour score, same tag': [0.1, 0.2, 0.3].map((w): [string, Partial<Choice>] => [`× ${w}, same tag`, { fusedNeighbour: w, sameTag: true }]),
  'lexical search alone (no embedder): + share × best neighbour score': [0, 0.1, 0.2, 0.3, 0.5].flatMap(w => [1, 2].map((span): [string, Partial<Choice>] => [`× ${w}, span ${span}`, { lexicalOnly: true, fusedNeighbour: w, span }])),
  'lexical side: + share × best neighbour score': [0.1, 0.2, 0.3, 0.5].map((w): [string, Partial<Choice>] => [`× ${w}`, { lexicalNeighbour: w }]),
}

function misses(convs: Conversation[]): void {
  let unreachable = 0, neighbourInTop = 0, vectorClose = 0, lexicalClose = 0, other = 0
  for (const c of convs) {
    const cited = new Set(c.records.flatMap(r => r.metadata.evidence as string[]))
    for (const q of c.questions) {
      const top = ranking(c, q, DEFAULT)
      if (top.slice(0, 10).some(cites(q))) continue
      if (![...q.evidence].some(id => cited.has(id))) { unreachable++; continue }
      const hits = c.records.map((r, n) => cites(q)(r) ? n : -1).filter(n => n >= 0)
      const tops = new Set(top.slice(0, 10).map(r => c.position.get(r.id)!))
      if (hits.some(n => neighbours(c.records, n, 2, 2).some(m => tops.has(m)))) neighbourInTop++
      else if (vectorRanking(c, q, DEFAULT).slice(0, 20).some(cites(q))) vectorClose++
      else if (q.lexical.slice(0, 20).some(cites(q))) lexicalClose++
      else other++
    }
  }
  console.log(`misses at 10: ${unreachable} cite no observation's turn; of the rest, ${neighbourInTop} have an evidence record within 2 of a top-10 record (same session), ${vectorClose} more rank 11-20 on the vector side, ${lexicalClose} on the lexical side, ${other} neither`)
}

const convs = await load()
const base = convs.map(c => evaluate(c, DEFAULT))
if (process.argv.includes('--misses')) misses(convs)
console.log(`LoCoMo dev, leave one conversation out; cells: recall@5 / recall@10 / MRR@10 (questions ± against the default at 5 / 10)`)
console.log(`| variant | ${FILES.join(' | ')} | all |`)
console.log(`| --- | ${FILES.map(() => '---').join(' | ')} | --- |`)
console.log(`| default hybrid | ${base.map(h => cell(h)).join(' | ')} | ${cell(total(base))} |`)
const chosen: string[] = []
for (const [family, members] of Object.entries(FAMILIES)) {
  const scored = members.map(([name, change]) => ({ name, hits: convs.map(c => evaluate(c, { ...DEFAULT, ...change })) }))
  for (const { name, hits } of scored) console.log(`| ${family}: ${name} | ${hits.map((h, i) => cell(h, base[i])).join(' | ')} | ${cell(total(hits), total(base))} |`)
  const folds = convs.map((_, out) => {
    const on = (hits: Hits[]) => total(hits.filter((_, i) => i !== out))
    const best = [...scored].sort((x, y) => on(y.hits).at10 - on(x.hits).at10 || on(y.hits).at5 - on(x.hits).at5)[0]!
    return `held out ${FILES[out]}: chose ${best.name} (${signed(on(best.hits).at5 - on(base).at5)} / ${signed(on(best.hits).at10 - on(base).at10)} on the two), held-out ${signed(best.hits[out]!.at5 - base[out]!.at5)} / ${signed(best.hits[out]!.at10 - base[out]!.at10)}`
  })
  chosen.push(`${family}: ${folds.join('; ')}`)
}
console.log('\nchosen on two conversations, read on the third (questions at 5 / 10 against the default):')
for (const line of chosen) console.log(`- ${line}`)
console.log(`\nembedder cache: ${model.stats.hits} hits, ${model.stats.misses} texts embedded`)

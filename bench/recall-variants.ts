/**
 * `npm run bench:recall-variants`: the hybrid variants behind `DEFAULT_FUSION` and
 * `embeddingText`, on the LoCoMo dev conversations (protocol of bench/recall.ts), without and with
 * event dates: which text of a record is embedded, the lexical side with its levers on or off, RRF
 * k and depths, vector weight, and a score fusion (max-normalised BM25F blended with cosine) in
 * place of RRF. Lexical rankings come from the store (`adapter.search`, limit 100, the ranking
 * `hybridSearch` fuses); vector rankings are exact cosine over `localEmbedder()` vectors from the
 * disk cache (bench/cached-embedder.ts). The RRF here is `hybridSearch`'s (same ranks, same ties:
 * first seen first); the row "rrf k10 100/100, title+content+tags" reproduces its figures.
 * Also prints how many questions only one of the two rankings finds in its top 10 (what fusion
 * can win). Per-category hits: c1 multi-hop, c2 temporal, c3 open-domain, c4 single-hop.
 */
import { eventTimeWords } from '../src/memory/kinds.ts'
import type { MemoryRecord } from '../src/memory/types.ts'
import { createSearchIndex } from '../src/memory/search-index.ts'
import { dot, embedAll, FILES, loadConversation } from './locomo-vectors.ts'

interface Q { evidence: Set<string>; lexical: MemoryRecord[]; plainLex: MemoryRecord[]; lexScores: number[]; qv: Float32Array; question: string; category: number }
interface Conv { records: MemoryRecord[]; questions: Q[]; texts: Record<string, Float32Array[]> }

const TEXTS: Record<string, (r: MemoryRecord) => string> = {
  'title+content+tags (current)': r => [r.title, r.content, r.tags.length > 0 ? r.tags.join(', ') : undefined].filter(Boolean).join('\n'),
  'content': r => r.content,
  'content + " " + tags': r => `${r.content} ${r.tags.join(' ')}`,
  'tags + ": " + content': r => `${r.tags.join(', ')}: ${r.content}`,
  'content + date words': r => { const w = eventTimeWords(r.occurredAt ?? r.createdAt); return w ? `${r.content} ${w}` : r.content },
}

async function load(eventTime: boolean): Promise<Conv[]> {
  const out: Conv[] = []
  for (const file of FILES) {
    const { conversation: c, adapter, target, records } = await loadConversation(file, eventTime)
    const texts: Record<string, Float32Array[]> = {}
    for (const [name, fn] of Object.entries(TEXTS)) texts[name] = await embedAll(records.map(fn))
    const qvs = await embedAll(c.questions.map(q => q.question))
    const plainIndex = createSearchIndex({ feedback: { records: 0 }, proximity: { weight: 0 }, tagBoost: 1, irregularForms: false })
    for (const r of records) plainIndex.update(r)
    if (records.length !== c.records.length) console.log(`${file}: ${c.records.length} observations, ${records.length} active records (dedupe merged some)`)
    const questions: Q[] = []
    for (const [i, q] of c.questions.entries()) {
      const hits = await adapter.search(target, { query: q.question, limit: 100 })
      questions.push({ evidence: q.evidence, lexical: hits.map(h => h.record), lexScores: hits.map(h => h.score), plainLex: plainIndex.search({ query: q.question, limit: 100 }).map(h => h.record), qv: qvs[i]!, question: q.question, category: q.category })
    }
    out.push({ records, questions, texts })
  }
  return out
}


interface Fusion { k: number; lexDepth: number; vecDepth: number; lw: number; vw: number; text: string; mode?: 'rrf' | 'vector' | 'lexical' | 'score'; plain?: boolean; alpha?: number }

function run(convs: Conv[], f: Fusion) {
  let n = 0, h5 = 0, h10 = 0, rr = 0
  const cat: Record<number, [number, number]> = {}
  for (const c of convs) {
    const vecs = c.texts[f.text]!
    for (const q of c.questions) {
      const sims = c.records.map((r, i) => ({ r, s: dot(vecs[i]!, q.qv), i }))
      sims.sort((a, b) => b.s - a.s || a.i - b.i)
      const vec = sims.slice(0, f.vecDepth).filter(x => x.s > 0).map(x => x.r)
      const lex = (f.plain ? q.plainLex : q.lexical).slice(0, f.lexDepth)
      let order: MemoryRecord[]
      if (f.mode === 'vector') order = vec
      else if (f.mode === 'lexical') order = lex
      else if (f.mode === 'score') {
        // convex combination of max-normalised lexical score and cosine
        const top = q.lexScores[0] ?? 1
        const m = new Map<string, { r: MemoryRecord; s: number }>()
        lex.forEach((r, i) => m.set(r.id, { r, s: (1 - f.alpha!) * (q.lexScores[i]! / top) }))
        for (const x of sims.slice(0, f.vecDepth)) { const e = m.get(x.r.id); if (e) e.s += f.alpha! * x.s; else m.set(x.r.id, { r: x.r, s: f.alpha! * x.s }) }
        order = [...m.values()].sort((a, b) => b.s - a.s).map(e => e.r)
      }
      else {
        const score = new Map<string, { r: MemoryRecord; s: number; first: number }>()
        let seen = 0
        lex.forEach((r, rank) => score.set(r.id, { r, s: f.lw / (f.k + rank + 1), first: seen++ }))
        vec.forEach((r, rank) => {
          const e = score.get(r.id)
          if (e) e.s += f.vw / (f.k + rank + 1)
          else score.set(r.id, { r, s: f.vw / (f.k + rank + 1), first: seen++ })
        })
        order = [...score.values()].sort((a, b) => b.s - a.s || a.first - b.first).map(e => e.r)
      }
      const rank = order.slice(0, 10).findIndex(r => (r.metadata.evidence as string[]).some(id => q.evidence.has(id)))
      n++
      const cc = cat[q.category] ??= [0, 0]; cc[1]++; if (rank !== -1) cc[0]++
      if (rank !== -1 && rank < 5) h5++
      if (rank !== -1) { h10++; rr += 1 / (rank + 1) }
    }
  }
  return { r5: h5 / n, r10: h10 / n, mrr: rr / n, n, cat: Object.entries(cat).map(([k, [a, b]]) => `c${k} ${a}/${b}`).join(' ') }
}

const plain = await load(false)
const dated = await load(true)
const base: Fusion = { k: 10, lexDepth: 100, vecDepth: 100, lw: 1, vw: 1, text: 'title+content+tags (current)' }
const rows: Array<[string, string, Fusion]> = []
for (const text of Object.keys(TEXTS)) rows.push(['vector only', text, { ...base, text, mode: 'vector' }])
for (const text of Object.keys(TEXTS)) if (text !== base.text) rows.push(['rrf k10 100/100', text, { ...base, text }])
rows.push(['lexical only', '', { ...base, mode: 'lexical' }])
rows.push(['lexical only, levers off', '', { ...base, mode: 'lexical', plain: true }])
rows.push(['rrf k10 levers off', 'title+content+tags (current)', { ...base, plain: true }])
rows.push(['rrf k10 levers off', 'content', { ...base, plain: true, text: 'content' }])
for (const alpha of [0.3, 0.4, 0.5, 0.6, 0.7]) rows.push([`score alpha ${alpha}`, 'title+content+tags (current)', { ...base, mode: 'score', alpha }])
for (const k of [2, 5, 10, 20, 60]) for (const d of [20, 50, 100]) rows.push([`rrf k${k} ${d}/${d}`, base.text, { ...base, k, lexDepth: d, vecDepth: d }])
for (const vw of [0.5, 0.75, 1.25, 1.5]) rows.push([`rrf k10 100/100 vector weight ${vw}`, base.text, { ...base, vw }])
console.log('| fusion | embedded text | recall@5 | recall@10 | MRR@10 | + dates recall@5 | recall@10 | MRR@10 | hits@10 by category | + dates |')
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |')
for (const [name, text, f] of rows) {
  const a = run(plain, f), b = run(dated, f)
  console.log(`| ${name} | ${text} | ${a.r5.toFixed(3)} | ${a.r10.toFixed(3)} | ${a.mrr.toFixed(3)} | ${b.r5.toFixed(3)} | ${b.r10.toFixed(3)} | ${b.mrr.toFixed(3)} | ${a.cat} | ${b.cat} |`)
}

{
  for (const [label, convs] of [['plain', plain], ['dated', dated]] as const) {
    let n = 0, lexOnly = 0, vecOnly = 0, both = 0
    const f = { ...base }
    for (const c of convs) {
      const vecs = c.texts[f.text]!
      for (const q of c.questions) {
        n++
        const cites = (r: MemoryRecord) => (r.metadata.evidence as string[]).some(id => q.evidence.has(id))
        const sims = c.records.map((r, i) => ({ r, s: dot(vecs[i]!, q.qv), i })).sort((a, b) => b.s - a.s || a.i - b.i)
        const l = q.lexical.slice(0, 10).some(cites)
        const v = sims.slice(0, 10).some(x => cites(x.r))
        if (l && v) both++; else if (l) lexOnly++; else if (v) vecOnly++
      }
    }
    console.log(`${label}: of ${n} questions, top 10 of both rankings find ${both}, only lexical ${lexOnly}, only vector ${vecOnly} (either: ${((both + lexOnly + vecOnly) / n).toFixed(3)})`)
  }
}

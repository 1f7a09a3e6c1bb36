/**
 * `npx tsx bench/recall-folds.ts`: the lexical ranking on the LoCoMo dev conversations (protocol of
 * bench/recall.ts, index level: `createSearchIndex` of the memory layer, limit 10), with event
 * dates (`occurredAt` = the session date, what `agent memory import --locomo` sets) unless
 * `DATES=0` (the records' `createdAt` is the session date either way, so the default date words,
 * `occurredAt` else `createdAt`, are the same), in two folds by conversation (A: conv-26; B: conv-30 + conv-41) so that a ranking
 * change is judged on a half it was not tuned on. `--misses` prints the questions the default
 * ranking misses at 10 with a class each: the cited turn is in no record, near-miss (an evidence
 * record ranks 11-20), no query term in any evidence record (vocabulary), or ranked lower.
 */
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createSearchIndex, type MemorySearchIndexOptions } from '../src/memory/search-index.ts'
import type { MemoryRecord } from '../src/memory/types.ts'
import { tokenize } from '../src/search/text.ts'
import { createSearchIndex as createEngineIndex, type SearchText } from '../src/search/search.ts'
import { searchableContent, searchableTags } from '../src/memory/kinds.ts'
import { loadLocomo, type LocomoConversation } from './locomo.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const FILES = ['conv-26', 'conv-30', 'conv-41']
const FOLDS: Record<string, string[]> = { A: ['conv-26'], B: ['conv-30', 'conv-41'] }
const dates = process.env.DATES !== '0'
const conversations = FILES.map(file => loadLocomo(join(root, '../shared/data/locomo', `${file}.json`), file, { eventTime: dates }))

function recordsOf(conversation: LocomoConversation): MemoryRecord[] {
  return conversation.records.map((input, n) => ({ id: `mem_${n}`, store: 'locomo', scope: { user: conversation.id }, kind: input.kind ?? 'semantic', content: input.content, tags: input.tags ?? [], metadata: input.metadata ?? {}, pinned: false, supersedes: [], provenance: {}, audit: { via: 'import' }, createdAt: input.createdAt ?? '2023-01-01T00:00:00Z', updatedAt: input.createdAt ?? '2023-01-01T00:00:00Z', version: 1, status: 'active', ...(input.occurredAt ? { occurredAt: input.occurredAt } : {}) }) as MemoryRecord)
}

export interface FoldRow { recall5: number; recall10: number; mrr10: number; questions: number }

/** Recall@5/@10 and MRR@10 of `options` per fold and over all questions. */
export function evaluate(options: MemorySearchIndexOptions & { text?: SearchText<MemoryRecord> }): Record<'A' | 'B' | 'all', FoldRow> {
  const per: Record<string, { q: number; h5: number; h10: number; rr: number }> = {}
  for (const conversation of conversations) {
    const index = options.text ? createEngineIndex<MemoryRecord>(options as never) : createSearchIndex(options)
    for (const record of recordsOf(conversation)) index.update(record)
    const c = per[conversation.id] = { q: 0, h5: 0, h10: 0, rr: 0 }
    for (const question of conversation.questions) {
      const hits = index.search({ query: question.question, limit: 10 })
      const rank = hits.findIndex(hit => (hit.record.metadata.evidence as string[]).some(id => question.evidence.has(id)))
      c.q++
      if (rank !== -1 && rank < 5) c.h5++
      if (rank !== -1) { c.h10++; c.rr += 1 / (rank + 1) }
    }
  }
  const sum = (ids: string[]): FoldRow => {
    const t = ids.reduce((a, id) => ({ q: a.q + per[id]!.q, h5: a.h5 + per[id]!.h5, h10: a.h10 + per[id]!.h10, rr: a.rr + per[id]!.rr }), { q: 0, h5: 0, h10: 0, rr: 0 })
    return { recall5: t.h5 / t.q, recall10: t.h10 / t.q, mrr10: t.rr / t.q, questions: t.q }
  }
  return { A: sum(FOLDS.A!), B: sum(FOLDS.B!), all: sum(FILES) }
}

const f = (v: number) => v.toFixed(3)
export function line(name: string, row: ReturnType<typeof evaluate>, base?: ReturnType<typeof evaluate>): string {
  const d = (k: 'A' | 'B' | 'all', m: 'recall5' | 'recall10') => base ? ` (${row[k][m] - base[k][m] >= 0 ? '+' : ''}${Math.round((row[k][m] - base[k][m]) * row[k].questions)})` : ''
  return `| ${name} | ${f(row.A.recall5)}${d('A', 'recall5')} / ${f(row.A.recall10)}${d('A', 'recall10')} | ${f(row.B.recall5)}${d('B', 'recall5')} / ${f(row.B.recall10)}${d('B', 'recall10')} | ${f(row.all.recall5)} / ${f(row.all.recall10)} / ${f(row.all.mrr10)} |`
}

function misses(): void {
  const counts: Record<string, number> = {}
  for (const conversation of conversations) {
    const records = recordsOf(conversation)
    const index = createSearchIndex()
    for (const record of records) index.update(record)
    const cited = new Set(records.flatMap(r => r.metadata.evidence as string[]))
    for (const question of conversation.questions) {
      const hits = index.search({ query: question.question, limit: 20 })
      const isEvidence = (r: MemoryRecord) => (r.metadata.evidence as string[]).some(id => question.evidence.has(id))
      const rank = hits.findIndex(hit => isEvidence(hit.record))
      if (rank !== -1 && rank < 10) continue
      const evidenceRecords = records.filter(isEvidence)
      const qTerms = new Set(tokenize(question.question))
      let cls: string
      if (evidenceRecords.length === 0) cls = [...question.evidence].some(id => cited.has(id)) ? 'other' : 'cited turn in no record'
      else if (rank !== -1) cls = 'near-miss 11-20'
      else {
        const shared = (r: MemoryRecord) => [...qTerms].filter(t => new Set(tokenize(`${searchableContent(r)} ${searchableTags(r).join(' ')}`)).has(t))
        const best = evidenceRecords.map(shared).sort((a, b) => b.length - a.length)[0]!
        cls = best.length === 0 ? 'no query term in evidence' : best.length === 1 && conversation.records[0]!.tags!.length && best.every(t => records.some(r => r.tags.some(tag => tokenize(tag).includes(t)))) ? 'only the speaker name shared' : 'shares terms, ranked > 20'
      }
      counts[cls] = (counts[cls] ?? 0) + 1
      if (process.argv.includes('--verbose')) {
        console.log(`[${cls}] c${question.category} ${conversation.id}: ${question.question}`)
        for (const r of records.filter(isEvidence).slice(0, 3)) console.log(`    evidence: ${r.content} [${r.tags.join(',')}]${r.occurredAt ? ` ${r.occurredAt.slice(0, 10)}` : ''}`)
        for (const h of hits.slice(0, 2)) console.log(`    top: ${h.record.content}`)
      }
    }
  }
  console.log(counts)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--misses')) misses()
  else {
    console.log(`LoCoMo dev, ${dates ? 'with' : 'without'} event dates; fold A conv-26, fold B conv-30 + conv-41`)
    console.log('| ranking | A r@5 / r@10 | B r@5 / r@10 | all r@5 / r@10 / MRR |')
    const base = evaluate({})
    console.log(line('defaults', base))
    const off = { feedback: { records: 0 }, proximity: { weight: 0 }, tagBoost: 1, irregularForms: false, synonyms: { weight: 0 } }
    console.log(line('levers off', evaluate(off), base))
    console.log(line('synonyms off', evaluate({ synonyms: { weight: 0 } }), base))
    console.log(line('feedback from 10 records', evaluate({ feedback: { records: 10 } }), base))
    console.log(line('synonyms off, feedback from 10 records', evaluate({ synonyms: { weight: 0 }, feedback: { records: 10 } }), base))
    console.log(line('date words off (dateWords: false)', evaluate({ dateWords: false }), base))
    console.log(line('date words of occurredAt only', evaluate({ dateWords: 'occurred' }), base))
    for (const dates of [1, 2]) console.log(line(`dates weight ${dates}`, evaluate({ fieldWeights: { dates } }), base))
  }
}

/**
 * The lexical ranking levers measured one by one on the LoCoMo dev conversations (the data and
 * protocol of bench/recall.ts, `../shared/data/locomo/`): for the index defaults, everything off,
 * each lever alone on top of everything off, and each lever left out of the defaults, the
 * recall@5, recall@10, MRR@10 and p50/p95 of a search over `createSearchIndex(options)` of the
 * memory layer. Run with `npx tsx bench/levers.ts`.
 */
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createSearchIndex, type MemorySearchIndexOptions } from '../src/memory/search-index.ts'
import type { MemoryRecord } from '../src/memory/types.ts'
import { loadLocomo } from './locomo.ts'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const FILES = ['conv-26', 'conv-30', 'conv-41']
const conversations = FILES.map(file => loadLocomo(join(root, '../shared/data/locomo', `${file}.json`), file))

const OFF: MemorySearchIndexOptions = { feedback: { records: 0 }, proximity: { weight: 0 }, tagBoost: 1, irregularForms: false, synonyms: { weight: 0 } }
const LEVERS: Record<string, MemorySearchIndexOptions> = {
  feedback: { feedback: { records: 5 } },
  proximity: { proximity: { weight: 0.5 } },
  tagBoost: { tagBoost: 1.5 },
  irregularForms: { irregularForms: true },
  synonyms: { synonyms: { weight: 0.7 } },
}
const WITHOUT: Record<string, MemorySearchIndexOptions> = {
  feedback: { feedback: { records: 0 } },
  proximity: { proximity: { weight: 0 } },
  tagBoost: { tagBoost: 1 },
  irregularForms: { irregularForms: false },
  synonyms: { synonyms: { weight: 0 } },
}

const pct = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(p * values.length))] ?? 0

function evaluate(options: MemorySearchIndexOptions) {
  let questions = 0, hit5 = 0, hit10 = 0, reciprocal = 0
  const times: number[] = []
  for (const conversation of conversations) {
    const index = createSearchIndex(options)
    conversation.records.forEach((input, n) => {
      const record: MemoryRecord = { id: `mem_${n}`, store: 'locomo', scope: { user: conversation.id }, kind: input.kind ?? 'semantic', content: input.content, tags: input.tags ?? [], metadata: input.metadata ?? {}, pinned: false, supersedes: [], provenance: {}, audit: { via: 'import' }, createdAt: input.createdAt ?? '2023-01-01T00:00:00Z', updatedAt: input.createdAt ?? '2023-01-01T00:00:00Z', version: 1, status: 'active' }
      index.update(record)
    })
    for (const question of conversation.questions) {
      const start = performance.now()
      const hits = index.search({ query: question.question, limit: 10 })
      times.push(performance.now() - start)
      const rank = hits.findIndex(hit => (hit.record.metadata.evidence as string[]).some(id => question.evidence.has(id)))
      questions++
      if (rank !== -1 && rank < 5) hit5++
      if (rank !== -1 && rank < 10) { hit10++; reciprocal += 1 / (rank + 1) }
    }
  }
  return { recall5: +(hit5 / questions).toFixed(3), recall10: +(hit10 / questions).toFixed(3), mrr10: +(reciprocal / questions).toFixed(3), p50Ms: +pct(times, 0.5).toFixed(3), p95Ms: +pct(times, 0.95).toFixed(3) }
}

const merge = (a: MemorySearchIndexOptions, b: MemorySearchIndexOptions): MemorySearchIndexOptions => ({ ...a, ...b, feedback: { ...a.feedback, ...b.feedback }, proximity: { ...a.proximity, ...b.proximity }, synonyms: { ...a.synonyms, ...b.synonyms } })
// One pass first, so that the first row's latencies do not include compiling the engine.
evaluate({})
const rows: Array<[string, ReturnType<typeof evaluate>]> = [['defaults (all levers on)', evaluate({})], ['all levers off', evaluate(OFF)]]
for (const [name, lever] of Object.entries(LEVERS)) rows.push([`off + ${name}`, evaluate(merge(OFF, lever))])
for (const [name, lever] of Object.entries(WITHOUT)) rows.push([`defaults - ${name}`, evaluate(lever)])
console.log(`LoCoMo dev, ${conversations.reduce((sum, c) => sum + c.questions.length, 0)} questions, index level (createSearchIndex, limit 10)`)
console.log('| ranking | recall@5 | recall@10 | MRR@10 | p50 ms | p95 ms |')
console.log('| --- | --- | --- | --- | --- | --- |')
for (const [name, row] of rows) console.log(`| ${name} | ${row.recall5} | ${row.recall10} | ${row.mrr10} | ${row.p50Ms} | ${row.p95Ms} |`)

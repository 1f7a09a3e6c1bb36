import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { scoreSlot, type Bm25fParams } from '../../src/search/bm25f.ts'
import { rankedCandidates } from '../../src/search/candidates.ts'
import { lentTerms, type FeedbackParams } from '../../src/search/feedback.ts'
import { topByMatchMasks } from '../../src/search/match-masks.ts'
import { scoreSlots, slotScorer, topByMaxScore } from '../../src/search/max-score.ts'
import { PLAIN_TEXT } from '../../src/search/plain-text.ts'
import { checkQuery, type CheckedQuery } from '../../src/search/query.ts'
import { queryTerms } from '../../src/search/query-terms.ts'
import { candidateScorer } from '../../src/search/rerank.ts'
import type { ScoredSlot } from '../../src/search/slots.ts'
import { IndexState } from '../../src/search/state.ts'
import { DEFAULT_SEARCH_INDEX_OPTIONS } from '../../src/search/index.ts'
import type { SearchDocument } from '../../src/search/types.ts'

// A small vocabulary with a very common word, so lists of very different lengths meet in a query;
// "movie" and "film" are one synonym group (terms weighted below 1 besides the fuzzy "kayek").
const WORDS = ['kayak', 'paddle', 'lake', 'river', 'trip', 'coffee', 'tea', 'paris', 'note', 'note', 'note', 'note', 'rent', 'garden', 'jazz', 'movie', 'film']
const SYNONYM_WEIGHT = DEFAULT_SEARCH_INDEX_OPTIONS.synonyms.weight
const params: Bm25fParams = { weights: [2, 1, 2, 1], k1: 1.2, b: 0.75 }
const lending: FeedbackParams = { ...DEFAULT_SEARCH_INDEX_OPTIONS.feedback, minRecords: 1, maxShare: 0.5 }
const levers = { depth: 100, window: 3, proximityWeight: 0.5, tagBoost: 1.5 }

interface Doc extends SearchDocument { readonly tags: string[] }

// Either words of similar frequencies, or one word in nearly every record beside rare ones (the
// lists MaxScore walks last).
const even = fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 12 })
const skewed = fc.array(fc.oneof({ arbitrary: fc.constant('note'), weight: 4 }, { arbitrary: fc.constantFrom(...WORDS), weight: 1 }), { minLength: 1, maxLength: 5 })
const corpusOf = (words: fc.Arbitrary<string[]>) => fc.array(fc.record({
  title: fc.option(words, { nil: undefined }),
  content: words,
  tags: fc.array(fc.constantFrom('travel', 'kayak', 'tea'), { maxLength: 2 }),
  day: fc.integer({ min: 0, max: 5 }),
  removed: fc.boolean(),
}), { minLength: 1, maxLength: 120 })
const corpus = fc.oneof(corpusOf(even), corpusOf(skewed))

function build(docs: Array<{ title?: string[]; content: string[]; tags: string[]; day: number; removed: boolean }>) {
  const state = new IndexState<Doc>(PLAIN_TEXT, true)
  docs.forEach((doc, n) => state.add({
    id: `r${n}`, status: 'active', kind: 'semantic', title: doc.title?.join(' '), content: doc.content.join(' '), tags: doc.tags,
    // Few distinct times: ties in score and time go to the later position.
    createdAt: new Date(Date.UTC(2024, 0, 1 + doc.day)).toISOString(),
  }, state.nextPosition++))
  docs.forEach((doc, n) => { if (doc.removed && state.slots.live > 1) state.remove(`r${n}`) })
  return state
}

/** Every live slot scored from its own tokens, filtered, sorted best first: the ranking pruning must equal. */
function bruteForce(state: IndexState<Doc>, terms: ReadonlyMap<string, number>, checked: CheckedQuery, excluded: ReadonlySet<number>, limit: number, counted: number) {
  const all: Array<ScoredSlot & { matched: number }> = []
  for (let slot = 0; slot < state.slots.count; slot++) {
    if (state.slots.alive[slot] === 0 || excluded.has(slot)) continue
    const { score, matched } = scoreSlot(state, params, terms, slot, counted)
    const record = state.slots.records[slot]!
    if (score > 0 && (checked.tags.length === 0 || checked.tags.every(tag => record.tags.includes(tag)))) all.push({ slot, score, matched })
  }
  return all.sort((a, c) => state.slots.compare(c, a)).slice(0, limit)
}

const queryWords = fc.oneof(
  fc.array(fc.constantFrom(...WORDS, 'kayek', 'unknown'), { minLength: 1, maxLength: 6 }),
  fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 2 }).map(rare => ['note', ...rare]),
)
const query = fc.tuple(queryWords, fc.option(fc.constantFrom('travel', 'kayak'), { nil: undefined }), fc.integer({ min: 1, max: 12 }))

/** Terms of `terms` some live record holds. */
function known(state: IndexState<Doc>, terms: ReadonlyMap<string, number>): number {
  return [...terms.keys()].filter(term => (state.vocabulary.termFrequency[state.vocabulary.termIds.get(term) ?? -1] ?? 0) > 0).length
}

describe('top-k pruning', () => {
  it('MaxScore keeps the same top k as scoring every posting: same slots, same scores, ties to the newest then the later position', () => {
    fc.assert(fc.property(corpus, query, (docs, [text, tag, limit]) => {
      const state = build(docs)
      const checked = checkQuery({ query: text.join(' '), tags: tag === undefined ? undefined : [tag] })
      const terms = queryTerms(state.vocabulary, text.join(' '), SYNONYM_WEIGHT)
      const excluded = new Set([0, 3])
      const pass = { limit, checked, excluded, counted: terms.size }
      const pruned = topByMaxScore(state, params, terms, pass)
      expect(pruned).toEqual(topByMaxScore(state, params, terms, { ...pass, prune: false }))
      expect(pruned).toEqual(bruteForce(state, terms, checked, excluded, limit, terms.size))
      if (known(state, terms) <= 6) {
        expect(topByMatchMasks(state, params, terms, pass, Number.POSITIVE_INFINITY)!.ranked).toEqual(pruned)
      }
    }), { numRuns: 400 })
  })

  it('the match-mask pass keeps the same top k as scoring every posting, with records written and removed between searches', () => {
    const doc = fc.record({ title: fc.option(even, { nil: undefined }), content: even, tags: fc.array(fc.constantFrom('travel', 'kayak', 'tea'), { maxLength: 2 }), day: fc.integer({ min: 0, max: 5 }), removed: fc.boolean() })
    const search = fc.tuple(fc.array(fc.constantFrom(...WORDS), { minLength: 1, maxLength: 6 }), fc.integer({ min: 1, max: 12 }))
    const step = fc.record({ docs: fc.array(doc, { maxLength: 40 }), searches: fc.array(search, { minLength: 1, maxLength: 4 }) })
    fc.assert(fc.property(fc.array(step, { minLength: 1, maxLength: 4 }), (steps) => {
      const state = new IndexState<Doc>(PLAIN_TEXT, true)
      let written = 0
      for (const { docs, searches } of steps) {
        const first = written
        for (const doc of docs) {
          state.add({ id: `r${written++}`, status: 'active', kind: 'semantic', title: doc.title?.join(' '), content: doc.content.join(' '), tags: doc.tags, createdAt: new Date(Date.UTC(2024, 0, 1 + doc.day)).toISOString() }, state.nextPosition++)
        }
        docs.forEach((doc, n) => { if (doc.removed && state.slots.live > 1) state.remove(`r${first + n}`) })
        for (const [text, limit] of searches) {
          const terms = queryTerms(state.vocabulary, text.join(' '), SYNONYM_WEIGHT)
          const checked = checkQuery({ query: text.join(' ') })
          const pass = { limit, checked, excluded: new Set([1]), counted: terms.size }
          // A synonym can make a seventh term: the mask pass is not taken then.
          if (known(state, terms) > 6) continue
          expect(topByMatchMasks(state, params, terms, pass, Number.POSITIVE_INFINITY)!.ranked).toEqual(bruteForce(state, terms, checked, pass.excluded, limit, terms.size))
        }
      }
    }), { numRuns: 600 })
  })

  it('the match-mask pass keeps the same top k as scoring every posting when its first read visits only the records listed holding several terms', () => {
    // Hundreds of records of a few words each and a small k: the first read's masks all hold two
    // terms or one term's rarer classes (a word repeated, or in the title), and records of one
    // word repeated compete with those holding several.
    const repeated = fc.tuple(fc.constantFrom(...WORDS), fc.integer({ min: 2, max: 6 })).map(([word, times]) => Array.from({ length: times }, () => word))
    const few = fc.oneof({ arbitrary: fc.array(fc.constantFrom(...WORDS), { minLength: 2, maxLength: 5 }), weight: 6 }, { arbitrary: repeated, weight: 2 })
    const many = fc.array(fc.record({ title: fc.option(fc.constantFrom(...WORDS).map(word => [word]), { nil: undefined, freq: 8 }), content: few, tags: fc.constant<string[]>([]), day: fc.integer({ min: 0, max: 5 }), removed: fc.boolean() }), { minLength: 200, maxLength: 600 })
    const search = fc.tuple(fc.uniqueArray(fc.constantFrom(...WORDS), { minLength: 2, maxLength: 4 }), fc.integer({ min: 1, max: 4 }))
    fc.assert(fc.property(many, search, (docs, [text, limit]) => {
      const state = build(docs)
      const terms = queryTerms(state.vocabulary, text.join(' '), SYNONYM_WEIGHT)
      if (known(state, terms) > 6) return
      const checked = checkQuery({ query: text.join(' ') })
      const pass = { limit, checked, excluded: new Set([2]), counted: terms.size }
      expect(topByMatchMasks(state, params, terms, pass, Number.POSITIVE_INFINITY)!.ranked).toEqual(bruteForce(state, terms, checked, pass.excluded, limit, terms.size))
    }), { numRuns: 150 })
  })

  it('the match-mask pass finds the one record passing the filters when it holds one word repeated, beside hundreds holding several', () => {
    // Three words of about the same frequency in pairs and triples, some alone, and a rarer one;
    // the only record tagged "travel" holds the rarer one, in the title and three times in the
    // content: its bound is above the pairs', its words' usual bound below them.
    const group = (count: number, content: string[], day: number) => Array.from({ length: count }, () => ({ content, tags: [], day, removed: false }))
    const docs = [
      ...group(100, ['kayak', 'paddle', 'note'], 1), ...group(100, ['paddle', 'river', 'note'], 2), ...group(100, ['kayak', 'river', 'note'], 3), ...group(100, ['kayak', 'paddle', 'river'], 4),
      ...group(60, ['lake', 'kayak', 'note'], 1), ...group(60, ['lake', 'paddle', 'note'], 2), ...group(60, ['lake', 'river', 'note'], 3), ...group(40, ['lake', 'note', 'tea'], 4),
      ...group(60, ['kayak', 'note', 'tea'], 1), ...group(60, ['paddle', 'note', 'tea'], 2), ...group(60, ['river', 'note', 'tea'], 3),
      { title: ['lake'], content: ['lake', 'lake', 'lake'], tags: ['travel'], day: 0, removed: false },
    ]
    const state = build(docs)
    const terms = queryTerms(state.vocabulary, 'kayak paddle river lake', SYNONYM_WEIGHT)
    const checked = checkQuery({ query: 'kayak paddle river lake', tags: ['travel'] })
    const pass = { limit: 1, checked, counted: terms.size }
    const ranked = topByMatchMasks(state, params, terms, pass, Number.POSITIVE_INFINITY)!.ranked
    expect(ranked.map(candidate => candidate.slot)).toEqual([docs.length - 1])
    expect(ranked).toEqual(bruteForce(state, terms, checked, new Set(), 1, terms.size))
  })

  it('ranked candidates with feedback and re-ranking on are the same by either first pass and as an exhaustive ranking of every record', () => {
    fc.assert(fc.property(corpus, query, fc.integer({ min: 0, max: 3 }), fc.constantFrom(0.1, 1, 4), (docs, [text, tag, depth], keptCount, weight) => {
      const feedback = { ...lending, weight }
      const state = build(docs)
      const checked = checkQuery({ query: text.join(' '), tags: tag === undefined ? undefined : [tag] })
      const terms = queryTerms(state.vocabulary, text.join(' '), SYNONYM_WEIGHT)
      const kept = new Set(Array.from({ length: keptCount }, (_, n) => n * 2).filter(slot => state.slots.alive[slot] === 1))
      const exhaustive = rankedCandidates(state, params, feedback, terms, checked, kept, depth, 'exhaustive')
      const pruned = rankedCandidates(state, params, feedback, terms, checked, kept, depth, 'max-score')
      const masked = known(state, terms) <= 6 ? rankedCandidates(state, params, feedback, terms, checked, kept, depth, 'match-masks') : pruned
      // The reference: every record scored by the query, feedback from the best ten, every record scored again.
      const first = bruteForce(state, terms, checked, new Set(), feedback.records, terms.size)
      const lent = lentTerms(state, feedback, terms, first)
      const all = new Map([...terms, ...lent])
      const reference = bruteForce(state, all, checked, kept, depth, terms.size)
      const scorer = candidateScorer(state, levers, terms)
      const reranked = (ranked: typeof reference) => ranked.map(candidate => ({ slot: candidate.slot, score: scorer(candidate) }))
      expect(pruned.ranked.map(({ slot, score }) => ({ slot, score }))).toEqual(reference.map(({ slot, score }) => ({ slot, score })))
      expect(exhaustive.ranked.map(({ slot, score }) => ({ slot, score }))).toEqual(reference.map(({ slot, score }) => ({ slot, score })))
      expect(reranked(pruned.ranked)).toEqual(reranked(reference))
      expect(masked.ranked).toEqual(pruned.ranked)
      for (const slot of kept) {
        expect(masked.kept.get(slot)).toEqual(pruned.kept.get(slot))
        expect(pruned.kept.get(slot)!.score).toBe(exhaustive.kept.get(slot)!.score)
        expect(pruned.kept.get(slot)!.score).toBe(scoreSlot(state, params, all, slot).score)
      }
    }), { numRuns: 1000 })
  })

  it('the match-mask pass by term counts keeps the same candidates as an exhaustive ranking when lent terms reach records of every count of terms', () => {
    // Hundreds of records of two to six words, some repeated (a rarer class), and numbers that
    // feedback lends: the first pass leaves out the records of fewer terms, and the lent terms
    // reach records of every count.
    const words = ['kayak', 'paddle', 'lake', 'river', 'trip', 'coffee', 'tea', 'garden']
    const repeated = fc.tuple(fc.constantFrom(...words), fc.integer({ min: 2, max: 4 })).map(([word, times]) => Array.from({ length: times }, () => word))
    const content = fc.tuple(fc.array(fc.constantFrom(...words), { minLength: 1, maxLength: 5 }), fc.option(repeated, { nil: undefined, freq: 4 }), fc.integer({ min: 0, max: 30 }))
      .map(([some, again, number]) => [...some, ...(again ?? []), `n${number}`])
    const many = fc.array(fc.record({ title: fc.constant(undefined), content, tags: fc.constant<string[]>([]), day: fc.integer({ min: 0, max: 5 }), removed: fc.boolean() }), { minLength: 200, maxLength: 500 })
    const search = fc.tuple(fc.uniqueArray(fc.constantFrom(...words), { minLength: 3, maxLength: 6 }), fc.integer({ min: 1, max: 12 }), fc.constantFrom(0.1, 0.5))
    fc.assert(fc.property(many, search, (docs, [text, depth, weight]) => {
      const state = build(docs)
      const terms = queryTerms(state.vocabulary, text.join(' '), SYNONYM_WEIGHT)
      if (known(state, terms) > 6) return
      const checked = checkQuery({ query: text.join(' ') })
      const feedback = { ...lending, weight, maxShare: 0.2 }
      const kept = new Set<number>()
      const masked = rankedCandidates(state, params, feedback, terms, checked, kept, depth, 'match-masks')
      expect(masked.ranked).toEqual(rankedCandidates(state, params, feedback, terms, checked, kept, depth, 'exhaustive').ranked)
      const pass = { limit: depth, checked, counted: terms.size }
      expect(topByMatchMasks(state, params, terms, pass, Number.POSITIVE_INFINITY, false)!.ranked).toEqual(topByMatchMasks(state, params, terms, pass, Number.POSITIVE_INFINITY)!.ranked)
    }), { numRuns: 150 })
  })

  it('a record only a lent term reaches holds none of the query terms, by every first pass', () => {
    // Ten records of the query's words share "n17"; feedback lends it, and it reaches "garden n17".
    const docs = [
      ...Array.from({ length: 10 }, () => ({ content: ['river', 'paddle', 'n17'], tags: [], day: 0, removed: false })),
      { content: ['garden', 'n17'], tags: [], day: 1, removed: false },
    ]
    const state = build(docs)
    const terms = queryTerms(state.vocabulary, 'river paddle', SYNONYM_WEIGHT)
    const checked = checkQuery({ query: 'river paddle' })
    const feedback = { ...lending, weight: 0.5, maxShare: 1 }
    for (const pass of ['exhaustive', 'max-score', 'match-masks'] as const) {
      const { ranked } = rankedCandidates(state, params, feedback, terms, checked, new Set(), 12, pass)
      const garden = ranked.find(candidate => candidate.slot === 10)
      expect(garden, pass).toMatchObject({ matched: 0 })
      expect(garden!.score, pass).toBeGreaterThan(0)
      expect(ranked.filter(candidate => candidate.slot !== 10).map(candidate => candidate.matched), pass).toEqual(Array(10).fill(2))
    }
  })

  it('scoring given slots seeks every posting list to the same postings as scoring each slot alone, over lists of thousands of postings in blocks of up to 512', () => {
    // Lists of every density (a word in most records, in one of ten, in a few): the slots asked
    // lie a few postings ahead, a block ahead, or past a list's end.
    const words = ['kayak', 'paddle', 'lake', 'river', 'trip', 'coffee']
    const docs = fc.array(fc.tuple(fc.integer({ min: 0, max: 63 }), fc.integer({ min: 0, max: 5 })), { minLength: 1500, maxLength: 3000 })
    const asked = fc.array(fc.integer({ min: 0, max: 2999 }), { minLength: 1, maxLength: 200 })
    fc.assert(fc.property(docs, asked, fc.uniqueArray(fc.constantFrom(...words, 'note'), { minLength: 1, maxLength: 7 }), (picks, slotsAsked, text) => {
      // Each of the first five words in half the records, the last in one of nine, "note" in all.
      const contentOf = (bits: number) => [...words.slice(0, 5).filter((_, at) => ((bits >>> at) & 1) === 1), ...(bits % 9 === 0 ? [words[5]!] : []), 'note']
      const state = build(picks.map(([bits, day]) => ({ content: contentOf(bits), tags: [], day, removed: false })))
      const terms = queryTerms(state.vocabulary, text.join(' '), SYNONYM_WEIGHT)
      const wanted = [...new Set(slotsAsked.filter(slot => slot < state.slots.count))].sort((a, c) => a - c)
      const expected = wanted.map(slot => ({ slot, ...scoreSlot(state, params, terms, slot, terms.size) }))
      expect(scoreSlots(state, params, terms, terms.size, wanted)).toEqual(expected)
      // A scorer's cursors are rewound between calls: the second call seeks from the lists' start again.
      const scorer = slotScorer(state, params, terms, terms.size)
      expect(scorer(wanted.slice(wanted.length >> 1))).toEqual(expected.slice(wanted.length >> 1))
      expect(scorer(wanted)).toEqual(expected)
    }), { numRuns: 40 })
  })
})

import type { CustomRunContext, CustomRunDriver, ToolCallOutcome } from '../../../src/index.ts'

/**
 * The deterministic driver of the playground `support` agent: no API key, no model. It maps one
 * line of input onto the memory tools so that every tool and the approval flow can be tried:
 *
 * - `remember <text>` -> `memory_remember { content: <text>, kind: 'semantic' }`
 * - `forget <id>` -> `memory_delete { id }`
 * - anything else (a question) -> `memory_search { query: <input> }`, replying with the top
 *   results; when the whole sentence matches nothing (search counts the whole query as one
 *   substring), it searches each significant word, ranks records by the words they match (rarer
 *   words count more), and says so in the reply.
 *
 * When the run continues after an approval it replies `Saved <id>.` / `Not saved: <reason>.`
 * (or `Deleted <id>.` / `Not deleted: <reason>.` for a forget).
 */
export function supportDriver(): CustomRunDriver {
  return {
    async run(context) {
      if (context.resumed) return replyAfterApproval(context, context.resumed.approval.toolName, context.resumed.outcome)
      const input = (context.input ?? '').trim()
      const remember = /^remember\b[:\s]*(.*)$/is.exec(input)
      if (remember) return rememberFact(context, remember[1]!.trim())
      const forget = /^forget\b[:\s]*(.*)$/is.exec(input)
      if (forget) return forgetRecord(context, forget[1]!.trim())
      return answerQuestion(context, input)
    },
  }
}

/** Most results quoted in a reply. */
const REPLY_RESULTS = 5
/** Most single words searched when the whole question finds nothing. */
const MAX_WORD_SEARCHES = 6
/** Results asked for per single-word search (the tool allows up to 100). */
const WORD_SEARCH_LIMIT = 50

/** Words that carry no meaning on their own in a question (English). */
const STOP_WORDS = new Set([
  'about', 'after', 'all', 'also', 'and', 'any', 'anything', 'are', 'been', 'before', 'but', 'can', 'could', 'did', 'does', 'doing',
  'done', 'for', 'from', 'get', 'got', 'had', 'has', 'have', 'her', 'hers', 'him', 'his', 'how', 'into', 'its', 'know',
  'many', 'more', 'much', 'not', 'now', 'our', 'out', 'she', 'should', 'some', 'tell', 'than', 'that', 'the', 'their', 'them',
  'then', 'there', 'these', 'they', 'this', 'those', 'was', 'were', 'what', 'when', 'where', 'which', 'who', 'whom', 'whose',
  'why', 'will', 'with', 'would', 'you', 'your', 'remember', 'recall', 'memory', 'please', 'thing', 'things', 'kind', 'kinds',
])

/** A search result as `memory_search` returns it (`{ store, results: [...] }`). */
interface SearchResult {
  id: string
  content: string
  createdAt?: string
  score?: number
}

function searchResults(outcome: ToolCallOutcome): SearchResult[] {
  if (outcome.status !== 'ok') return []
  const results = (outcome.output as { results?: unknown } | null)?.results
  if (!Array.isArray(results)) return []
  return results.filter((item): item is SearchResult => !!item && typeof item === 'object' && typeof (item as SearchResult).id === 'string' && typeof (item as SearchResult).content === 'string')
}

function outcomeProblem(outcome: ToolCallOutcome): string | undefined {
  if (outcome.status === 'error') return outcome.error.message
  if (outcome.status === 'denied') return outcome.reason
  return undefined
}

function withoutFinalPeriod(text: string): string {
  return text.trim().replace(/[.\s]+$/, '')
}

/** The significant words of a question: lower-cased, possessive `'s` dropped, 3+ letters, no stop words. */
export function significantWords(question: string): string[] {
  const words = question.toLowerCase().replace(/['’]s\b/g, '').split(/[^\p{L}\p{N}]+/u)
  return [...new Set(words.filter(word => word.length >= 3 && !STOP_WORDS.has(word)))]
}

function listResults(results: readonly SearchResult[]): string {
  return results.map(result => `- ${result.content} (${result.id}${result.createdAt ? `, ${result.createdAt.slice(0, 10)}` : ''})`).join('\n')
}

async function answerQuestion(context: CustomRunContext, question: string): Promise<void> {
  const search = context.tools.memory_search
  if (!search) return context.write('I have no memory to search in this run.')
  if (question === '') return context.write('Ask me something, or say "remember <fact>" or "forget <id>".')
  const whole = await search.call({ query: question })
  const problem = outcomeProblem(whole)
  if (problem) return context.write(`I could not search my memory: ${problem}`)
  const direct = searchResults(whole)
  if (direct.length > 0) {
    const shown = direct.slice(0, REPLY_RESULTS)
    return context.write(`I found ${direct.length} record${direct.length === 1 ? '' : 's'} for "${question}"${shown.length < direct.length ? `; the best ${shown.length}` : ''}:\n${listResults(shown)}`)
  }
  const words = significantWords(question).slice(0, MAX_WORD_SEARCHES)
  if (words.length === 0) return context.write('I found nothing in my memory for that.')
  // A word found in few records says more than one found in many (a speaker's name is in most of
  // their facts): each word adds 1 / (its number of hits), ties go to the store's own score.
  const ranked = new Map<string, { result: SearchResult; weight: number; score: number }>()
  for (const word of words) {
    const results = searchResults(await search.call({ query: word, limit: WORD_SEARCH_LIMIT }))
    for (const result of results) {
      const entry = ranked.get(result.id) ?? { result, weight: 0, score: 0 }
      entry.weight += 1 / results.length
      entry.score += result.score ?? 0
      ranked.set(result.id, entry)
    }
  }
  const best = [...ranked.values()].sort((a, b) => b.weight - a.weight || b.score - a.score).slice(0, REPLY_RESULTS)
  if (best.length === 0) return context.write(`I found nothing in my memory for that (I also searched the words ${words.join(', ')}).`)
  context.write(`No record contains the whole question, so I searched its words (${words.join(', ')}). Best matches:\n${listResults(best.map(entry => entry.result))}`)
}

async function rememberFact(context: CustomRunContext, content: string): Promise<void> {
  const remember = context.tools.memory_remember
  if (!remember) return context.write('Memory writes are off for this agent, so I cannot remember that.')
  if (content === '') return context.write('Tell me what to remember: "remember <fact>".')
  const outcome = await remember.call({ content, kind: 'semantic' })
  if (outcome.status === 'approval-required') return context.write(`I will remember "${content}" once you approve it.`)
  return replyAfterApproval(context, 'memory_remember', outcome)
}

async function forgetRecord(context: CustomRunContext, id: string): Promise<void> {
  const forget = context.tools.memory_delete
  if (!forget) return context.write('Memory writes are off for this agent, so I cannot forget records.')
  if (id === '') return context.write('Tell me which record to forget: "forget <id>" (ids appear in search answers).')
  const outcome = await forget.call({ id })
  if (outcome.status === 'approval-required') return context.write(`I will forget ${id} once you approve it.`)
  return replyAfterApproval(context, 'memory_delete', outcome)
}

/** The reply to a write's outcome, right away (policy `allow`) or after an approval decision. */
function replyAfterApproval(context: CustomRunContext, toolName: string, outcome: ToolCallOutcome): void {
  const deleting = toolName === 'memory_delete'
  if (outcome.status === 'ok') {
    const output = outcome.output as { id?: unknown; record?: { id?: unknown } } | null
    const id = deleting ? output?.id : output?.record?.id
    return context.write(`${deleting ? 'Deleted' : 'Saved'} ${typeof id === 'string' ? id : 'the record'}.`)
  }
  const problem = outcomeProblem(outcome) ?? 'the approval is still pending'
  context.write(`${deleting ? 'Not deleted' : 'Not saved'}: ${withoutFinalPeriod(problem)}.`)
}

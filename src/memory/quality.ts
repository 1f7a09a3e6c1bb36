/**
 * The built-in quality filter of tool writes (hosted-memory document, "How memory extraction
 * works": "Quality filters evaluate whether information is useful enough to store ... What gets
 * filtered out: Greetings and pleasantries ("Hello", "I appreciate it"), Generic traits without
 * specifics ("User is friendly"), Temporary moods or states"). Duplicates are suppressed by the
 * stores (`duplicates: 'skip'`), not here.
 *
 * The rules are deliberately narrow: text is refused only when it holds nothing but greeting,
 * thanks and filler words, or when it is one subject, one linking verb and one generic trait or
 * mood ("User is friendly", "I'm tired today"). Anything naming a thing, a place, a number or a
 * preference passes.
 */
import type { MemoryWriteCandidate, MemoryWriteVerdict } from './types.ts'

// Greeting, thanks and filler words: text made only of these (and the small words below) holds no fact.
const PLEASANTRIES = new Set([
  'hello', 'hi', 'hey', 'hiya', 'howdy', 'greetings', 'good', 'morning', 'afternoon', 'evening', 'night', 'day',
  'bye', 'goodbye', 'cheers', 'thanks', 'thank', 'thx', 'ty', 'appreciate', 'appreciated', 'grateful', 'welcome',
  'please', 'sorry', 'ok', 'okay', 'k', 'sure', 'yes', 'yeah', 'yep', 'no', 'nope', 'cool', 'great', 'nice', 'awesome',
  'perfect', 'fine', 'alright', 'lol', 'haha', 'hmm', 'um', 'uh', 'wow', 'oh', 'ah', 'well', 'indeed', 'noted', 'got',
  'see', 'later', 'soon', 'care', 'take', 'have', 'lot', 'lots', 'much', 'so', 'very', 'really', 'again', 'there',
  'everyone', 'all', 'friend', 'buddy', 'pal', 'mate', 'sir', 'madam', 'folks', 'user', 'said', 'says', 'greeted',
  'thanked', 'politely', 'chatted', 'small', 'talk',
])
const SMALL_WORDS = new Set(['i', 'me', 'my', 'you', 'your', 'we', 'it', 'its', 'it\'s', 'that', 'this', 'the', 'a', 'an', 'to', 'for', 'and', 'of', 'is', 'are', 'am', 'was', 'be', 'do', 'did', 'im', 'i\'m', 'just', 'that\'s', 'thats'])

// "User is friendly", "The customer seems happy", "I'm tired today": a subject, a linking verb, one generic trait or mood.
const TRAITS = [
  'friendly', 'nice', 'polite', 'kind', 'pleasant', 'rude', 'helpful', 'chatty', 'talkative', 'quiet', 'funny', 'smart', 'curious',
  'happy', 'sad', 'glad', 'tired', 'sleepy', 'bored', 'angry', 'upset', 'excited', 'busy', 'fine', 'good', 'great', 'ok', 'okay',
  'cool', 'grateful', 'thankful', 'satisfied', 'frustrated', 'annoyed', 'nervous', 'stressed', 'hungry', 'relaxed', 'calm',
  'confused', 'interested', 'engaged', 'positive', 'negative', 'cheerful', 'impatient', 'patient', 'nice person', 'good person',
]
const GENERIC_TRAIT = new RegExp(
  `^(?:the |this |our )?(?:user|customer|client|person|they|he|she|i|i'm|im|you|we)(?: (?:is|are|am|was|were|seems?|seemed|appears?|appeared|feels?|felt|looks?|looked|sounds?|sounded|'s|'m|'re|is being|was being))?`
  + `(?: (?:very|really|quite|so|a bit|a little|kind of|pretty|extremely|generally|always|usually|overall|in a))*`
  + `(?: an?)? (?:${TRAITS.join('|')})(?: (?:mood|today|now|right now|at the moment|currently|person|overall))*$`,
)

function words(text: string): string[] {
  return text.toLowerCase().normalize('NFKC').replace(/[’‘]/g, '\'').split(/[^\p{L}\p{N}']+/u).filter(word => word !== '' && word !== '\'')
}

/**
 * Why the built-in filter refuses `text`, or `undefined` when it may be stored:
 * - only greeting, thanks and filler words ("Hello, I appreciate it", "Thanks a lot!", "ok"):
 *   "it is a greeting, thanks or filler, not a fact";
 * - a generic trait or passing mood ("User is friendly", "I'm tired today"): "it is a generic
 *   trait or passing mood without specifics";
 * - no letter or digit at all: "it holds no words".
 */
export function qualityProblem(text: string): string | undefined {
  const list = words(text)
  if (list.length === 0) return 'it holds no words, so no fact'
  if (list.every(word => PLEASANTRIES.has(word) || SMALL_WORDS.has(word))) return 'it is a greeting, thanks or filler, not a fact'
  if (GENERIC_TRAIT.test(list.join(' '))) return 'it is a generic trait or passing mood without specifics'
  return undefined
}

/**
 * The filter a store uses for tool writes when `write.filter` is not set (hosted-memory
 * document: greetings and pleasantries, generic traits without specifics and temporary moods are
 * not stored). Refuses with `{ reject: reason }`, which `memory_remember` and `remember_<store>`
 * turn into `MEMORY_WRITE_REJECTED` with the reason in the message. Reads the content only (an
 * episode's fields are a fact of their own, so episodic records with an episode pass). To add
 * rules of your own, call it first in your `write.filter` and return its answer unless it is
 * `'accept'`.
 */
export function defaultMemoryFilter(candidate: Pick<MemoryWriteCandidate, 'content' | 'episode'>): MemoryWriteVerdict {
  if (candidate.episode) return 'accept'
  const problem = qualityProblem(candidate.content)
  return problem === undefined ? 'accept' : { reject: `not saved: ${problem} (store specific, lasting facts such as preferences, names, dates or decisions)` }
}

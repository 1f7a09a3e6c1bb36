/**
 * The workload `npm run bench` measures every subject on (the JSONL store and its baselines, same
 * records, same queries): records of about 85 characters drawn from a small vocabulary with a
 * seeded generator, "weekend" in every record (the common term), "zebra" in 1 of 500 (the rare
 * term), a six-word question, and scopes `{ agent: 'bench', user: 'u<n % scopes>' }`.
 */
const WORDS = 'tea coffee hiking painting pottery camping music guitar family garden travel book movie running cooking sister brother school work city beach mountain river dinner lunch friend dog cat car train plane'.split(' ')

/** The records' contents, in order: the same texts for the same `count` on every run. */
export function workloadContents(count: number, seed = 11): string[] {
  let state = seed
  const random = () => (state = (state * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff
  const pick = () => WORDS[Math.floor(random() * WORDS.length)]!
  return Array.from({ length: count }, (_, i) => `User ${i % 97} enjoys ${pick()} and ${pick()} with a ${pick()} near the ${pick()} on the weekend${i % 500 === 7 ? ' zebra' : ''} note ${i}`)
}

/** The three query shapes of the issue-13 targets. */
export const QUERIES = { common: 'weekend', rare: 'zebra', sixWords: 'coffee garden sister beach train dinner' } as const

/** The user of record `n` among `scopes` scopes. */
export const scopeUser = (n: number, scopes: number) => `u${n % scopes}`

/** The scope of record `n` among `scopes` scopes. */
export const scopeOf = (n: number, scopes: number) => ({ agent: 'bench', user: scopeUser(n, scopes) })

/** The value at fraction `p` (0..1) of the sorted values. */
export const percentile = (values: readonly number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * p))] ?? 0

/** Milliseconds since `start` (a `performance.now()` value). */
export const since = (start: number) => performance.now() - start

/** A value rounded to 3 decimals (what the tables and results.json hold). */
export const round3 = (value: number) => Math.round(value * 1000) / 1000

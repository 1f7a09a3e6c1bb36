/**
 * The calendar periods a search query names ("on 7 July, 2023", "in May 2023", "in August",
 * "in 2022"), matched against a record's event date (`occurredAt`). Hybrid search uses them on its
 * vector side: a sentence embedding does not tell one date from another, so among the vector
 * candidates the records whose event date lies in a period the query names come first (the
 * full-text side already matches the date words, event-time.ts). English month names only;
 * relative dates ("last week") name no period.
 */
import type { MemoryRecord } from './types.ts'

/** A calendar period: a day, a month of a year, a month of any year, or a year (the fields given). */
export interface CalendarPeriod {
  year?: number
  /** 1..12. */
  month?: number
  /** 1..31, only with `month` and `year`. */
  day?: number
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']
const MONTH = `(${MONTHS.join('|')})`
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?'
const YEAR = '((?:19|20)\\d\\d)'

// Longest forms first; each match is blanked out so that its parts do not match again.
const FORMS: Array<[RegExp, (match: string[]) => CalendarPeriod]> = [
  [new RegExp(`\\b${DAY}\\s+(?:of\\s+)?${MONTH},?\\s+${YEAR}\\b`, 'gi'), match => ({ day: Number(match[1]), month: monthOf(match[2]!), year: Number(match[3]) })],
  [new RegExp(`\\b${MONTH}\\s+${DAY},?\\s+${YEAR}\\b`, 'gi'), match => ({ day: Number(match[2]), month: monthOf(match[1]!), year: Number(match[3]) })],
  [new RegExp(`\\b${MONTH},?\\s+${YEAR}\\b`, 'gi'), match => ({ month: monthOf(match[1]!), year: Number(match[2]) })],
  [new RegExp(`\\b${MONTH}\\b`, 'gi'), match => ({ month: monthOf(match[1]!) })],
  [new RegExp(`\\b${YEAR}\\b`, 'g'), match => ({ year: Number(match[1]) })],
]

function monthOf(name: string): number {
  return MONTHS.indexOf(name.toLowerCase()) + 1
}

/**
 * The periods `query` names, longest forms first. A month name alone counts in any case, except
 * "may" (as often a verb): alone, only "May" in capitals and not as the query's first word.
 */
export function namedPeriods(query: string): CalendarPeriod[] {
  let rest = query
  const periods: CalendarPeriod[] = []
  for (const [form, period] of FORMS) {
    rest = rest.replace(form, (...args: unknown[]) => {
      const match = args.slice(0, -2) as string[]
      const at = args.at(-2) as number
      const verb = match[0]!.toLowerCase() === 'may' && (match[0] !== 'May' || rest.slice(0, at).trim() === '')
      if (verb) return match[0]!
      periods.push(period(match))
      return ' '.repeat(match[0]!.length)
    })
  }
  return periods
}

/** Whether the record's `occurredAt` (its calendar date as written, without time zone shifts) lies in one of `periods`; a record without one lies in none. */
export function occurredIn(record: Pick<MemoryRecord, 'occurredAt'>, periods: readonly CalendarPeriod[]): boolean {
  const match = record.occurredAt === undefined ? null : /^(\d{4})-(\d{2})-(\d{2})/.exec(record.occurredAt)
  if (!match) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  return periods.some(period => (period.year === undefined || period.year === year) && (period.month === undefined || period.month === month) && (period.day === undefined || period.day === day))
}

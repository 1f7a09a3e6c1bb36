/**
 * LoCoMo loader for the recall benchmark: turns one conversation file of
 * `../shared/data/locomo/` into memory record inputs and queries, following the protocol of its
 * README ("Retrieval protocol used on this project"). The data stays outside the repository.
 */
import { readFileSync } from 'node:fs'
import type { MemoryRecordInput } from '../src/memory/types.ts'

/** One benchmark question: the question text (the query, unchanged) and its evidence dia_ids. */
export interface LocomoQuestion {
  question: string
  evidence: Set<string>
  category: number
}

/** A conversation ready for the benchmark. */
export interface LocomoConversation {
  id: string
  records: MemoryRecordInput[]
  questions: LocomoQuestion[]
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']

/** `"1:56 pm on 8 May, 2023"` as an ISO instant (read as UTC; the files give no zone). */
export function locomoInstant(text: string): string {
  const match = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})$/i.exec(text.trim())
  if (!match) throw new Error(`unreadable LoCoMo date ${JSON.stringify(text)}`)
  const [, hour, minute, half, day, month, year] = match
  const monthIndex = MONTHS.indexOf(month!.toLowerCase())
  if (monthIndex === -1) throw new Error(`unreadable LoCoMo month in ${JSON.stringify(text)}`)
  const hours = (Number(hour) % 12) + (half!.toLowerCase() === 'pm' ? 12 : 0)
  return new Date(Date.UTC(Number(year), monthIndex, Number(day), hours, Number(minute))).toISOString()
}

// Evidence lists sometimes hold two ids in one string ("D8:6; D9:17").
function diaIds(value: unknown): string[] {
  const values = Array.isArray(value) ? value : [value]
  return values.flatMap(item => String(item).split(/[;,\s]+/)).filter(id => id !== '')
}

/**
 * Reads one conversation file: observations become records, questions of categories 1 to 4 with
 * evidence become queries. With `eventTime`, each record's `occurredAt` is its session's date
 * (what the LoCoMo importer sets), so the session's day, month and year words are searchable.
 * With `importedAt` (an ISO instant), each record's `createdAt` is that instant plus its position
 * in the file in milliseconds, as an import of old conversations writes them (the write time),
 * instead of its session's date: the session date is then known only through `occurredAt`.
 */
export function loadLocomo(file: string, id: string, options: { eventTime?: boolean; importedAt?: string } = {}): LocomoConversation {
  const data = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  const records: MemoryRecordInput[] = []
  for (let session = 1; `session_${session}_date_time` in data; session++) {
    const observation = data[`session_${session}_observation`] as Record<string, Array<[string, unknown]>> | undefined
    if (!observation) continue
    const sessionDate = locomoInstant(String(data[`session_${session}_date_time`]))
    for (const [speaker, facts] of Object.entries(observation)) {
      for (const [fact, evidence] of facts) {
        const createdAt = options.importedAt ? new Date(Date.parse(options.importedAt) + records.length).toISOString() : sessionDate
        records.push({ kind: 'semantic', content: fact, tags: [speaker], metadata: { evidence: diaIds(evidence) }, createdAt, ...(options.eventTime ? { occurredAt: sessionDate } : {}) })
      }
    }
  }
  const qa = data.qa as Array<{ question: string; evidence?: unknown[]; category: number }>
  const questions = qa
    .filter(item => item.category >= 1 && item.category <= 4 && Array.isArray(item.evidence) && item.evidence.length > 0)
    .map(item => ({ question: item.question, evidence: new Set(diaIds(item.evidence)), category: item.category }))
  return { id, records, questions }
}

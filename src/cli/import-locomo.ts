import { basename } from 'node:path'
import { agentError } from '../errors.ts'
import type { MemoryAudit, MemoryProvenance, MemoryRecordInput, MemoryStoreAdapter, MemoryTarget } from '../memory/types.ts'

/**
 * Import of LoCoMo conversations (protocol: `shared/data/locomo/README.md`, "Retrieval protocol"):
 * each observation `session_N_observation: { <speaker>: [[fact, dia_id | dia_id[]], ...] }` becomes
 * one `semantic` record whose content is the fact, tags `[speaker]`, `metadata.evidence` the
 * dia_id(s) as an array, and `createdAt` and `occurredAt` (event time) the session's date.
 * One scope per speaker.
 */

/** One observation, ready to append into its speaker's scope. */
export interface LocomoObservation {
  speaker: string
  /** Session number `N` of `session_N_observation`. */
  session: number
  record: MemoryRecordInput & { tags: string[]; metadata: { evidence: string[] }; createdAt: string; occurredAt: string; provenance: MemoryProvenance }
}

const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december']

/**
 * Parses a LoCoMo session date such as `"1:56 pm on 8 May, 2023"` into an ISO 8601 instant.
 * The data carries no time zone, so the wall-clock time is taken as UTC
 * (`"1:56 pm on 8 May, 2023"` -> `"2023-05-08T13:56:00.000Z"`); `12:xx am` is just after midnight.
 *
 * @throws `LOCOMO_INVALID_DATE` when the text does not have that shape.
 */
export function parseLocomoDate(text: string): string {
  const match = /^\s*(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([a-z]+),?\s+(\d{4})\s*$/i.exec(text)
  const month = match ? MONTHS.indexOf(match[5]!.toLowerCase()) : -1
  if (!match || month < 0) {
    throw agentError('LOCOMO_INVALID_DATE', `"${text}" is not a LoCoMo session date`, 'use the form "1:56 pm on 8 May, 2023" in session_N_date_time', { text })
  }
  const hour12 = Number(match[1])
  const minute = Number(match[2])
  const day = Number(match[4])
  const hour = (hour12 % 12) + (match[3]!.toLowerCase() === 'pm' ? 12 : 0)
  const date = new Date(Date.UTC(Number(match[6]), month, day, hour, minute))
  if (hour12 < 1 || hour12 > 12 || minute > 59 || date.getUTCDate() !== day) {
    throw agentError('LOCOMO_INVALID_DATE', `"${text}" is not a valid date and time`, 'check the hour (1-12), minutes (0-59) and day of month', { text })
  }
  return date.toISOString()
}

function invalid(file: string, why: string): Error {
  return agentError('LOCOMO_INVALID_FILE', `${file}: ${why}`, 'pass a LoCoMo conversation file (one conversation object with session_N_observation and session_N_date_time keys)', { file })
}

/**
 * Turns a parsed LoCoMo conversation into observations, in session order, then file order.
 * `file` is only used for provenance (`{ source: 'import', file: basename(file) }`) and messages.
 *
 * @throws `LOCOMO_INVALID_FILE` when the value is not a conversation, an observation is malformed
 * or has no session date; `LOCOMO_INVALID_DATE` for an unreadable date.
 */
export function parseLocomoConversation(data: unknown, file: string): LocomoObservation[] {
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw invalid(file, 'the file is not one conversation object')
  const conversation = data as Record<string, unknown>
  const sessions = Object.keys(conversation)
    .map(key => /^session_(\d+)_observation$/.exec(key))
    .filter((match): match is RegExpExecArray => match !== null)
    .map(match => Number(match[1]))
    .sort((a, b) => a - b)
  if (sessions.length === 0) throw invalid(file, 'it has no session_N_observation keys')
  const provenance = { source: 'import', file: basename(file) }
  const observations: LocomoObservation[] = []
  for (const session of sessions) {
    const bySpeaker = conversation[`session_${session}_observation`]
    const dateText = conversation[`session_${session}_date_time`]
    if (typeof dateText !== 'string') throw invalid(file, `session_${session}_date_time is missing`)
    const createdAt = parseLocomoDate(dateText)
    if (!bySpeaker || typeof bySpeaker !== 'object' || Array.isArray(bySpeaker)) throw invalid(file, `session_${session}_observation is not an object of speakers`)
    for (const [speaker, facts] of Object.entries(bySpeaker as Record<string, unknown>)) {
      if (!Array.isArray(facts)) throw invalid(file, `session_${session}_observation.${speaker} is not a list`)
      facts.forEach((entry, index) => {
        const where = `session_${session}_observation.${speaker}[${index}]`
        if (!Array.isArray(entry) || typeof entry[0] !== 'string' || entry[0].trim() === '') throw invalid(file, `${where} is not [fact, dia_id]`)
        const cited: unknown = entry[1]
        const evidence = typeof cited === 'string' ? [cited] : Array.isArray(cited) && cited.every(id => typeof id === 'string') ? (cited as string[]) : undefined
        if (!evidence || evidence.length === 0) throw invalid(file, `${where} has no dia_id`)
        observations.push({
          speaker,
          session,
          record: { kind: 'semantic', content: entry[0], tags: [speaker], metadata: { evidence }, createdAt, occurredAt: createdAt, provenance: { ...provenance } },
        })
      })
    }
  }
  return observations
}

/**
 * The identity used to detect a re-import: whitespace-collapsed, lower-cased content plus the
 * sorted evidence ids. Two observations with the same text citing different turns stay distinct.
 */
export function observationKey(content: string, evidence: readonly string[]): string {
  return `${content.trim().replace(/\s+/g, ' ').toLowerCase()}\u0000${[...evidence].sort().join(',')}`
}

function evidenceOf(metadata: Record<string, unknown>): string[] {
  const value = metadata.evidence
  if (typeof value === 'string') return [value]
  return Array.isArray(value) ? value.filter((id): id is string => typeof id === 'string') : []
}

/** Counts of one import into one scope. */
export interface ImportCounts {
  /** Records appended. */
  added: number
  /** Observations skipped because the scope already had them (any status, so a deleted fact is not resurrected). */
  skipped: number
}

/**
 * Appends `records` into `target` through `adapter`, skipping those the scope already holds
 * (same {@link observationKey}, compared against `adapter.export(target)` and within the batch),
 * so re-importing a file adds nothing. Appends run one at a time, in order.
 */
export async function importRecords(
  adapter: MemoryStoreAdapter,
  target: MemoryTarget,
  records: readonly (MemoryRecordInput & { metadata?: Record<string, unknown> })[],
  audit: MemoryAudit,
): Promise<ImportCounts> {
  const seen = new Set((await adapter.export(target)).map(record => observationKey(record.content, evidenceOf(record.metadata))))
  const counts: ImportCounts = { added: 0, skipped: 0 }
  for (const record of records) {
    const key = observationKey(record.content, evidenceOf(record.metadata ?? {}))
    if (seen.has(key)) {
      counts.skipped++
      continue
    }
    await adapter.append(target, record, { audit })
    seen.add(key)
    counts.added++
  }
  return counts
}

/** Groups observations by speaker, keeping first-seen speaker order. */
export function groupBySpeaker(observations: readonly LocomoObservation[]): Map<string, LocomoObservation[]> {
  const groups = new Map<string, LocomoObservation[]>()
  for (const observation of observations) {
    const group = groups.get(observation.speaker) ?? []
    group.push(observation)
    groups.set(observation.speaker, group)
  }
  return groups
}

/**
 * The one instant rule of log lines, imports and search filters: ISO 8601 / RFC 3339 instants
 * and calendar dates, read to milliseconds since the epoch.
 */

// ISO 8601 / RFC 3339: a calendar date, optionally with a time and then a required zone.
const ISO_INSTANT = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):?(\d{2})))?$/i

/**
 * Milliseconds since the epoch of an ISO 8601 instant, or `undefined` when `value` is not one.
 * Accepted: `2024-05-01T09:30:00Z`, with seconds, fractions and `+01:00`-style offsets (honoured),
 * and a bare date `2024-05-01`, read as midnight UTC. Rejected: no zone on a time
 * (`2024-05-01T09:30`, which would depend on the machine's zone), impossible dates (`2024-02-30`),
 * and anything else `Date.parse` happens to read. The one instant rule of log lines, imports and
 * search filters.
 */
export function parseInstant(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined
  // A line checks `at` and then an equal `createdAt`: remember the last answer.
  if (value === lastInstant.text) return lastInstant.time
  const time = parseInstantText(value)
  lastInstant.text = value
  lastInstant.time = time
  return time
}

const lastInstant: { text: string | undefined; time: number | undefined } = { text: undefined, time: undefined }

function parseInstantText(value: string): number | undefined {
  const match = ISO_INSTANT.exec(value)
  if (!match) return undefined
  const [, year, month, day, hour = '0', minute = '0', second = '0', offsetHours = '0', offsetMinutes = '0'] = match
  const date = new Date(Date.UTC(Number(year), Number(month) - 1, Number(day)))
  if (date.getUTCMonth() !== Number(month) - 1 || date.getUTCDate() !== Number(day)) return undefined
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59 || Number(offsetHours) > 23 || Number(offsetMinutes) > 59) return undefined
  const time = Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value)
  return Number.isNaN(time) ? undefined : time
}

/** True for an ISO 8601 instant as {@link parseInstant} reads it. */
export function isInstant(value: unknown): value is string {
  return parseInstant(value) !== undefined
}

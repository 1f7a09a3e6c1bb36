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
  if (value.length === 24 || value.length === 20) {
    const time = parseIsoString(value)
    if (time !== undefined) return time
  }
  return parseInstantGeneral(value)
}

const digit = (value: string, at: number) => value.charCodeAt(at) - 48
const two = (value: string, at: number) => digit(value, at) * 10 + digit(value, at + 1)

/**
 * The form `Date#toISOString` writes (`2024-05-01T09:30:00.000Z`, or without milliseconds), read
 * by character code: most instants of a log are in it. `undefined` for anything else, or for a
 * value the general path must judge (a year before 1000, an impossible date or time).
 */
function parseIsoString(value: string): number | undefined {
  const length = value.length
  if (value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45 || value.charCodeAt(10) !== 84 || value.charCodeAt(13) !== 58 || value.charCodeAt(16) !== 58 || value.charCodeAt(length - 1) !== 90) return undefined
  if (length === 24 && value.charCodeAt(19) !== 46) return undefined
  for (const at of length === 24 ? ISO_DIGITS_MS : ISO_DIGITS) {
    const code = value.charCodeAt(at)
    if (code < 48 || code > 57) return undefined
  }
  const year = digit(value, 0) * 1000 + digit(value, 1) * 100 + two(value, 2)
  const month = two(value, 5)
  const day = two(value, 8)
  const hour = two(value, 11)
  const minute = two(value, 14)
  const second = two(value, 17)
  if (year < 1000 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59) return undefined
  const ms = length === 24 ? digit(value, 20) * 100 + two(value, 21) : 0
  return Date.UTC(year, month - 1, day, hour, minute, second, ms)
}

const ISO_DIGITS = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
const ISO_DIGITS_MS = [...ISO_DIGITS, 20, 21, 22]

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31
}

/** The general reading of {@link parseInstant} (exported so tests can hold the fast path to it). */
export function parseInstantGeneral(value: string): number | undefined {
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

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { isInstant, parseInstant, parseInstantGeneral } from '../src/instant.ts'

const digits = (length: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: length, maxLength: length }).map(list => list.join(''))

describe('instants', () => {
  it('reads the toISOString form by character code exactly as the general rule does, valid or not', () => {
    fc.assert(fc.property(
      digits(4), digits(2), digits(2), digits(2), digits(2), digits(2), fc.option(digits(3), { nil: undefined }), fc.constantFrom('Z', 'z', '+'),
      (year, month, day, hour, minute, second, ms, zone) => {
        const text = `${year}-${month}-${day}T${hour}:${minute}:${second}${ms === undefined ? '' : `.${ms}`}${zone}`
        expect(parseInstant(text)).toBe(parseInstantGeneral(text))
      },
    ), { numRuns: 3000 })
  })

  it('reads toISOString output of any millisecond back to that millisecond', () => {
    fc.assert(fc.property(fc.integer({ min: Date.UTC(1000, 0, 1), max: Date.UTC(9999, 11, 31) }), (ms) => {
      expect(parseInstant(new Date(ms).toISOString())).toBe(ms)
    }), { numRuns: 2000 })
  })

  it('refuses impossible dates and times and a time without a zone', () => {
    for (const text of ['2024-02-30T00:00:00.000Z', '2023-02-29T00:00:00Z', '2024-13-01T00:00:00Z', '2024-05-01T24:00:00Z', '2024-05-01T09:60:00Z', '2024-05-01T09:30:00', '2024-05-01T09:30:00.000']) {
      expect(isInstant(text)).toBe(false)
    }
    expect(parseInstant('2024-02-29T23:59:59.999Z')).toBe(Date.UTC(2024, 1, 29, 23, 59, 59, 999))
  })
})

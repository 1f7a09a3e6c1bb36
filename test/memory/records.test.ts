// Small helpers of src/memory/records.ts used on every write.
import { afterEach, describe, expect, it, vi } from 'vitest'
import { currentInstant, newRecordId } from '../../src/memory/records.ts'

describe('record helpers', () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  it('currentInstant is the ISO 8601 form of the current millisecond and follows the clock', () => {
    vi.useFakeTimers()
    vi.setSystemTime(new Date('2026-11-29T10:00:00.123Z'))
    expect(currentInstant()).toBe('2026-11-29T10:00:00.123Z')
    expect(currentInstant()).toBe('2026-11-29T10:00:00.123Z')
    vi.setSystemTime(new Date('2026-11-29T10:00:00.124Z'))
    expect(currentInstant()).toBe('2026-11-29T10:00:00.124Z')
  })

  it('newRecordId is mem_ and 32 hex digits, different each time', () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newRecordId()))
    expect(ids.size).toBe(1000)
    for (const id of ids) expect(id).toMatch(/^mem_[0-9a-f]{32}$/)
  })
})

/**
 * The built-in quality filter (hosted-memory document, "What gets filtered out"): the documented
 * examples, and every observation of the LoCoMo conversations (real facts about people) kept.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { parseLocomoConversation } from '../../src/cli/import-locomo.ts'
import { defaultMemoryFilter } from '../../src/capabilities/index.ts'
import { qualityProblem } from '../../src/memory/quality.ts'
import { HAS_LOCOMO, LOCOMO_DIR } from '../cli/locomo.ts'

describe('the built-in quality filter', () => {
  it('greetings and pleasantries are filtered out', () => {
    for (const text of ['Hello', 'Hello, I appreciate it', 'Thanks a lot!', 'Good morning!', 'ok', 'Bye!']) expect(qualityProblem(text), text).toBe('it is a greeting, thanks or filler, not a fact')
  })

  it('generic traits without specifics and temporary moods are filtered out', () => {
    for (const text of ['User is friendly', 'The user seems very happy', 'I\'m tired today', 'The user is a nice person']) expect(qualityProblem(text), text).toBe('it is a generic trait or passing mood without specifics')
  })

  it('factual statements about preferences, events and relationships pass', () => {
    for (const text of ['User is allergic to peanuts', 'User prefers dark mode in apps', 'User lives in Madrid and speaks Spanish and English', 'User\'s job title is Software Engineer', 'Lives in Oslo.', 'Hi, I am Sam']) expect(qualityProblem(text), text).toBeUndefined()
  })

  it('its verdict is { reject } with the reason, and an episode is never filtered', () => {
    expect(defaultMemoryFilter({ content: 'Thanks!' })).toEqual({ reject: expect.stringContaining('greeting, thanks or filler') })
    expect(defaultMemoryFilter({ content: 'Thanks!', episode: { observation: 'The user thanked us after the refund.' } })).toBe('accept')
  })

  it.skipIf(!HAS_LOCOMO)('keeps every observation of the LoCoMo conversations', () => {
    const rejected: string[] = []
    let total = 0
    for (const name of ['conv-26', 'conv-30', 'conv-41']) {
      const file = join(LOCOMO_DIR, `${name}.json`)
      for (const observation of parseLocomoConversation(JSON.parse(readFileSync(file, 'utf8')), file)) {
        total++
        if (qualityProblem(observation.record.content)) rejected.push(observation.record.content)
      }
    }
    expect(total).toBeGreaterThan(600)
    expect(rejected).toEqual([])
  })
})

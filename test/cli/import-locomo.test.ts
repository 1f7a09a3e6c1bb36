import { readFileSync } from 'node:fs'
import { describe, expect, it, vi } from 'vitest'
import { groupBySpeaker, importRecords, observationKey, parseLocomoConversation, parseLocomoDate } from '../../src/cli/import-locomo.ts'
import { inMemoryMemoryStore } from '../../src/capabilities/index.ts'
import type { MemoryStoreAdapter, MemoryStoreFactory } from '../../src/memory/types.ts'
import { CONV_26, HAS_LOCOMO, countObservations } from './locomo.ts'

// Each test launches the CLI as child processes, 1.2-1.6 s of CPU each (tsx loading src/): at a load
// of 15-20 on two cores a launch takes 5-8 s of wall time, so several exceed vitest's 30 s. Every
// launch keeps its own spawn timeout (60 s), which still fails a launch that hangs.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 })

const conversation = {
  speaker_a: 'Ann',
  speaker_b: 'Bo',
  session_1_date_time: '1:56 pm on 8 May, 2023',
  session_1_observation: {
    Ann: [['Ann adopted a cat.', 'D1:3'], ['Ann likes rain.', ['D1:5', 'D1:7']]],
    Bo: [['Bo runs a bakery.', 'D1:2']],
  },
  session_2_date_time: '12:09 am on 13 September, 2023',
  session_2_observation: { Ann: [['Ann moved to Oslo.', 'D2:1']] },
}

async function adapterOf(factory: MemoryStoreAdapter | MemoryStoreFactory): Promise<MemoryStoreAdapter> {
  return 'create' in factory && typeof factory.create === 'function' ? factory.create({ store: 'agent', agent: 'support', writable: true }) : (factory as MemoryStoreAdapter)
}

describe('LoCoMo dates', () => {
  it('a session date is read as UTC wall-clock time', () => {
    expect(parseLocomoDate('1:56 pm on 8 May, 2023')).toBe('2023-05-08T13:56:00.000Z')
    expect(parseLocomoDate('10:31 am on 13 October, 2023')).toBe('2023-10-13T10:31:00.000Z')
  })

  it('12 am is just after midnight and 12 pm is noon', () => {
    expect(parseLocomoDate('12:09 am on 13 September, 2023')).toBe('2023-09-13T00:09:00.000Z')
    expect(parseLocomoDate('12:20 pm on 8 December, 2023')).toBe('2023-12-08T12:20:00.000Z')
  })

  it('an unreadable or impossible date is LOCOMO_INVALID_DATE', () => {
    expect(() => parseLocomoDate('yesterday')).toThrow(/LOCOMO_INVALID_DATE/)
    expect(() => parseLocomoDate('1:56 pm on 31 February, 2023')).toThrow(/LOCOMO_INVALID_DATE/)
  })
})

describe('LoCoMo observations', () => {
  it('each observation becomes one semantic record tagged with its speaker, citing its dia_ids, created and occurred at its session date', () => {
    const observations = parseLocomoConversation(conversation, '/data/conv-x.json')
    expect(observations).toHaveLength(4)
    expect(observations[1]).toEqual({
      speaker: 'Ann',
      session: 1,
      record: {
        kind: 'semantic', content: 'Ann likes rain.', tags: ['Ann'], metadata: { evidence: ['D1:5', 'D1:7'] },
        createdAt: '2023-05-08T13:56:00.000Z', occurredAt: '2023-05-08T13:56:00.000Z', provenance: { source: 'import', file: 'conv-x.json' },
      },
    })
    expect(observations[3]!.record.createdAt).toBe('2023-09-13T00:09:00.000Z')
    expect(observations[3]!.record.occurredAt).toBe('2023-09-13T00:09:00.000Z')
    expect([...groupBySpeaker(observations).entries()].map(([speaker, group]) => [speaker, group.length])).toEqual([['Ann', 3], ['Bo', 1]])
  })

  it('a file without observations or with a malformed one is LOCOMO_INVALID_FILE', () => {
    expect(() => parseLocomoConversation({ speaker_a: 'A' }, 'x.json')).toThrow(/LOCOMO_INVALID_FILE/)
    expect(() => parseLocomoConversation([], 'x.json')).toThrow(/LOCOMO_INVALID_FILE/)
    expect(() => parseLocomoConversation({ session_1_date_time: '1:56 pm on 8 May, 2023', session_1_observation: { A: [['fact']] } }, 'x.json')).toThrow(/has no dia_id/)
    expect(() => parseLocomoConversation({ session_1_observation: { A: [['fact', 'D1:1']] } }, 'x.json')).toThrow(/session_1_date_time is missing/)
  })

  it('the re-import key ignores case, spacing and evidence order', () => {
    expect(observationKey(' Ann  likes RAIN. ', ['D1:7', 'D1:5'])).toBe(observationKey('ann likes rain.', ['D1:5', 'D1:7']))
    expect(observationKey('Ann likes rain.', ['D1:5'])).not.toBe(observationKey('Ann likes rain.', ['D1:6']))
  })

  it.skipIf(!HAS_LOCOMO)('conv-26 yields one record per observation', () => {
    const observations = parseLocomoConversation(JSON.parse(readFileSync(CONV_26, 'utf8')), CONV_26)
    const expected = countObservations(CONV_26)
    const bySpeaker = groupBySpeaker(observations)
    expect(new Map([...bySpeaker].map(([speaker, group]) => [speaker, group.length]))).toEqual(expected)
    expect(observations.every(o => o.record.provenance.file === 'conv-26.json' && o.record.tags[0] === o.speaker)).toBe(true)
  })
})

describe('importing records', () => {
  it('importing writes each record once with the import audit, and re-importing adds nothing', async () => {
    const adapter = await adapterOf(inMemoryMemoryStore())
    const target = { store: 'agent', scope: { agent: 'support', user: 'Ann' } }
    const records = groupBySpeaker(parseLocomoConversation(conversation, 'conv-x.json')).get('Ann')!.map(o => o.record)
    expect(await importRecords(adapter, target, records, { agent: 'support', user: 'Ann', via: 'import' })).toEqual({ added: 3, skipped: 0 })
    expect(await importRecords(adapter, target, records, { agent: 'support', user: 'Ann', via: 'import' })).toEqual({ added: 0, skipped: 3 })
    const stored = await adapter.export(target)
    expect(stored.map(r => r.content)).toEqual(['Ann adopted a cat.', 'Ann likes rain.', 'Ann moved to Oslo.'])
    expect(stored[1]).toMatchObject({ kind: 'semantic', tags: ['Ann'], metadata: { evidence: ['D1:5', 'D1:7'] }, createdAt: '2023-05-08T13:56:00.000Z', occurredAt: '2023-05-08T13:56:00.000Z', provenance: { source: 'import', file: 'conv-x.json' }, audit: { via: 'import', user: 'Ann' } })
  })

  it('the same fact in another scope is imported again there', async () => {
    const adapter = await adapterOf(inMemoryMemoryStore())
    const record = { kind: 'semantic', content: 'Shared fact.', metadata: { evidence: ['D1:1'] } }
    await importRecords(adapter, { store: 'agent', scope: { agent: 'support', user: 'Ann' } }, [record], { via: 'import' })
    expect(await importRecords(adapter, { store: 'agent', scope: { agent: 'support', user: 'Bo' } }, [record], { via: 'import' })).toEqual({ added: 1, skipped: 0 })
  })

  it('duplicates inside one batch are written once', async () => {
    const adapter = await adapterOf(inMemoryMemoryStore())
    const target = { store: 'agent', scope: { user: 'Ann' } }
    const record = { kind: 'semantic', content: 'Ann likes rain.', metadata: { evidence: ['D1:5'] } }
    expect(await importRecords(adapter, target, [record, { ...record, content: 'ann  LIKES rain.' }], { via: 'import' })).toEqual({ added: 1, skipped: 1 })
  })
})

import { describe, expect, it } from 'vitest'
import { hybridSearch } from '../../src/memory/hybrid-search.ts'
import { namedPeriods, occurredIn } from '../../src/memory/query-dates.ts'
import { inMemoryMemoryStore } from '../../src/memory/stores/in-memory.ts'
import type { MemoryTarget } from '../../src/memory/types.ts'
import { countingEmbedder } from '../search/vectors-embedder.ts'

describe('calendar periods a query names', () => {
  it('reads a day, a month of a year, a month alone and a year, longest form first', () => {
    expect(namedPeriods('What did Gina find on 1 February, 2023?')).toEqual([{ day: 1, month: 2, year: 2023 }])
    expect(namedPeriods('What did Maria do the weekend before April 10, 2023?')).toEqual([{ day: 10, month: 4, year: 2023 }])
    expect(namedPeriods('What happened on the 3rd of June 2022')).toEqual([{ day: 3, month: 6, year: 2022 }])
    expect(namedPeriods('What did Maria donate in December 2023?')).toEqual([{ month: 12, year: 2023 }])
    expect(namedPeriods('When did Melanie go camping in june?')).toEqual([{ month: 6 }])
    expect(namedPeriods('How many times did she go to the beach in 2023?')).toEqual([{ year: 2023 }])
    expect(namedPeriods('Who went hiking last week?')).toEqual([])
  })

  it('"may" alone is a month only as "May" after the first word', () => {
    expect(namedPeriods('What did she paint in May?')).toEqual([{ month: 5 }])
    expect(namedPeriods('May I ask what Jon did?')).toEqual([])
    expect(namedPeriods('What may Jon do next?')).toEqual([])
    expect(namedPeriods('What did Jon do on 7 may 2023?')).toEqual([{ day: 7, month: 5, year: 2023 }])
  })

  it('a record lies in a period by the calendar date of its occurredAt; one without occurredAt in none', () => {
    expect(occurredIn({ occurredAt: '2023-07-07T23:30:00-05:00' }, [{ day: 7, month: 7, year: 2023 }])).toBe(true)
    expect(occurredIn({ occurredAt: '2023-07-07' }, [{ month: 7 }])).toBe(true)
    expect(occurredIn({ occurredAt: '2022-07-07' }, [{ month: 7, year: 2023 }])).toBe(false)
    expect(occurredIn({}, [{ year: 2023 }])).toBe(false)
  })

  it('hybrid search ranks the vector candidates whose event date lies in the named period first', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true })
    const target: MemoryTarget = { store: 'agent', scope: { agent: 'support' } }
    const audit = { via: 'api' }
    // Same words, so the same vector: only the event date tells them apart.
    const june = await adapter.append(target, { kind: 'semantic', content: 'went camping by the lake', occurredAt: '2023-06-10' }, { audit })
    const july = await adapter.append(target, { kind: 'semantic', content: 'went camping by the lake', occurredAt: '2023-07-02' }, { audit, duplicates: 'keep' })
    const hits = await hybridSearch(adapter, target, { query: 'camping by the lake in July', limit: 2 }, { model: countingEmbedder() })
    // First of both rankings (1/11 + 0.75/11, the default vector weight): the full text matches the date word, and the vector side, where the two tie, puts July first.
    expect(hits.map(hit => [hit.record.id, hit.score])).toEqual([[july.id, 0.159091], [june.id, 0.145833]])
  })

  it('on the vector side, a record without occurredAt lies in a period by its createdAt', async () => {
    const adapter = await inMemoryMemoryStore().create({ store: 'agent', agent: 'support', writable: true })
    const target: MemoryTarget = { store: 'agent', scope: { agent: 'support' } }
    const audit = { via: 'import' }
    // Same words, so the same vector, and July added first: without the date it ranks first among the vectors.
    const july = await adapter.append(target, { kind: 'semantic', content: 'went camping by the lake', createdAt: '2023-07-02T10:00:00Z' }, { audit })
    const june = await adapter.append(target, { kind: 'semantic', content: 'went camping by the lake', createdAt: '2023-06-10T10:00:00Z' }, { audit, duplicates: 'keep' })
    // The vector ranking alone (lexical weight 0): 0.75 / (10 + rank).
    const hits = await hybridSearch(adapter, target, { query: 'camping by the lake in June', limit: 2 }, { model: countingEmbedder(), lexicalWeight: 0 })
    expect(hits.map(hit => [hit.record.id, hit.score])).toEqual([[june.id, 0.068182], [july.id, 0.0625]])
  })
})

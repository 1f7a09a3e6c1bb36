import { describe, expect, it } from 'vitest'
import { inMemoryMemoryStore } from '../../../src/memory/stores/in-memory.ts'
import type { MemoryStoreContext, MemoryTarget } from '../../../src/memory/types.ts'

const context: MemoryStoreContext = { store: 'agent', agent: 'support', writable: true }
const target: MemoryTarget = { store: 'agent', scope: { agent: 'support' } }
const audit = { via: 'api' }

describe('inMemoryMemoryStore', () => {
  it('needs no workspace and has kind in-memory', async () => {
    const factory = inMemoryMemoryStore()
    expect(factory.kind).toBe('in-memory')
    expect(await (await factory.create(context)).export(target)).toEqual([])
  })

  it('records persist across create() calls (invocations) of one factory', async () => {
    const factory = inMemoryMemoryStore()
    const saved = await (await factory.create(context)).append(target, { kind: 'semantic', content: 'kept between runs' }, { audit })
    const later = await factory.create(context)
    expect(await later.read(target, saved.id)).toEqual(saved)
  })

  it('a new factory starts empty', async () => {
    await (await inMemoryMemoryStore().create(context)).append(target, { kind: 'semantic', content: 'elsewhere' }, { audit })
    expect(await (await inMemoryMemoryStore().create(context)).export(target)).toEqual([])
  })
})

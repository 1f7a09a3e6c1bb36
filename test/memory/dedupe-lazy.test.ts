import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

// Duplicate detection costs nothing at open: a replay computes no
// duplicate keys; a partition's map is built on its first duplicate check and kept from then on.
const audit = { via: 'api' as const }
const target = { store: 'agent', scope: { agent: 'support', user: 'u1' } }

describe('duplicate keys built lazily', () => {
  it('a write after a fresh open finds a duplicate written before it, and the map follows later deletes and writes', async () => {
    const storage = createStorage({ driver: memoryDriver() })
    const first = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ storage }), writable: true })
    const original = await first.append(target, { kind: 'semantic', content: 'Likes  GREEN tea' }, { audit })
    await first.append({ ...target, scope: { agent: 'support', user: 'u2' } }, { kind: 'semantic', content: 'likes green tea' }, { audit })

    // A new workspace object replays the log; the duplicate check builds u1's map from it.
    const reopened = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ storage }), writable: true })
    const seen: string[] = []
    const again = await reopened.append(target, { kind: 'semantic', content: 'likes green tea' }, { audit, duplicates: 'skip', onDuplicate: record => seen.push(record.id) })
    expect(again.id).toBe(original.id)
    expect(seen).toEqual([original.id])
    const otherKind = await reopened.append(target, { kind: 'profile', content: 'likes green tea' }, { audit, duplicates: 'skip' })
    expect(otherKind.id).not.toBe(original.id)

    // The map built above is kept current: after the delete the same content is new again.
    await reopened.delete(target, original.id, { audit })
    const fresh = await reopened.append(target, { kind: 'semantic', content: 'likes green tea' }, { audit, duplicates: 'skip' })
    expect(fresh.id).not.toBe(original.id)
    const repeat = await reopened.append(target, { kind: 'semantic', content: 'LIKES green tea ' }, { audit, duplicates: 'skip' })
    expect(repeat.id).toBe(fresh.id)
  })
})

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createSupportAgent } from '../../playground/server/lib/support-agent.ts'
import type { MemoryCapability } from '../../src/memory/capability.ts'
import { LOCAL_EMBEDDER_MODEL_ID } from '../../src/memory/embeddings.ts'

const dir = mkdtempSync(join(tmpdir(), 'vam-support-embed-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))

const embedOf = async (embed?: 'auto' | 'off') => {
  const agent = await createSupportAgent({ workspaceDir: dir, driver: 'scripted', ...(embed ? { embed } : {}) })
  const capability = agent.capabilities.find(c => c.id === 'memory') as MemoryCapability
  return capability.options.stores.agent!.embed as { modelId?: string } | undefined
}

describe('the playground support agent', () => {
  it('searches with localEmbedder() when its packages are installed (they are devDependencies here)', async () => {
    expect((await embedOf())?.modelId).toBe(LOCAL_EMBEDDER_MODEL_ID)
  })

  it('searches full text only with embed: "off"', async () => {
    expect(await embedOf('off')).toBeUndefined()
  })
})

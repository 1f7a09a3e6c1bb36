// The head anchor and checkpoint checks of verification: a log cut at a line boundary is a
// changed log (src/log/head.ts, src/log/verify.ts).
import { existsSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { HEAD_DELAY_MS } from '../../src/log/head.ts'
import { openMemoryLog, verifyLog } from '../../src/memory/event-log.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryTarget } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

const KEY = 'memory:memory.jsonl'
const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const audit = { via: 'api' }
const headWritten = () => new Promise(done => setTimeout(done, HEAD_DELAY_MS * 4))

/** A log of `count` remembers whose head anchor was written; returns its directory and file paths. */
async function anchoredLog(count: number, checkpointEvery: number | false = false) {
  const dir = mkdtempSync(join(tmpdir(), 'vam-head-'))
  const adapter = workspaceJsonlMemoryStore({ checkpointEvery }).create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true })
  for (let n = 0; n < count; n++) await adapter.append(alice, { kind: 'semantic', content: `fact ${n}` }, { audit })
  await headWritten()
  const log = join(dir, 'memory/memory.jsonl')
  return { dir, adapter, log, head: `${log}.head`, checkpoint: `${log}.checkpoint` }
}

/** Cuts the file at `log` after its first `lines` lines. */
function cutAfter(log: string, lines: number): void {
  const text = readFileSync(log, 'utf8')
  let at = 0
  for (let n = 0; n < lines; n++) at = text.indexOf('\n', at) + 1
  truncateSync(log, Buffer.byteLength(text.slice(0, at)))
}

describe('head anchor', () => {
  it('names the lines and last digest of the log shortly after a burst of writes', async () => {
    const { head, log } = await anchoredLog(5)
    const lines = readFileSync(log, 'utf8').trim().split('\n')
    expect(JSON.parse(readFileSync(head, 'utf8'))).toEqual({ type: 'log-head', lines: 5, offset: Buffer.byteLength(readFileSync(log)), lastDigest: JSON.parse(lines[4]!).digest })
  })

  it('a log cut at a line boundary fails at open with the first missing line', async () => {
    const { dir, log } = await anchoredLog(5)
    cutAfter(log, 3)
    const opened = openMemoryLog(createWorkspace({ dir }), KEY)
    await expect(opened.view(state => state.records.size)).rejects.toMatchObject({ code: 'MEMORY_LOG_CORRUPT', details: { line: 4 } })
  })

  it('a log restored from an older backup fails at open with a fix naming the head anchor file and that removing it accepts the restored log', async () => {
    const { dir, log } = await anchoredLog(5)
    cutAfter(log, 4)
    const opened = openMemoryLog(createWorkspace({ dir }), KEY)
    const error = await opened.view(state => state.records.size).then(() => undefined, (thrown: unknown) => thrown) as { code: string; why: string; fix: string; details: Record<string, unknown> }
    expect(error.code).toBe('MEMORY_LOG_CORRUPT')
    expect(error.why).toBe('line 5 of the memory log "memory:memory.jsonl" fails verification: the log ends at line 4, but its head anchor "memory:memory.jsonl.head" names 5 lines: lines were removed from its end')
    expect(error.fix).toContain('if you restored an older backup of the log on purpose, check that it is the backup you meant, then remove the head anchor "memory:memory.jsonl.head" (the file memory/memory.jsonl.head in the workspace folder')
    expect(error.fix).toContain('that accepts the restored log')
    expect(error.details).toMatchObject({ head: 'memory:memory.jsonl.head', line: 5 })
    // Removing the head, as the fix says, opens the restored log.
    rmSync(join(dir, 'memory/memory.jsonl.head'))
    await expect(openMemoryLog(createWorkspace({ dir }), KEY).view(state => state.records.size)).resolves.toBe(4)
  })

  it('verifyLog reports a log cut at a line boundary, naming the head', async () => {
    const { dir, log } = await anchoredLog(5)
    cutAfter(log, 3)
    const verified = await verifyLog(createWorkspace({ dir }), KEY)
    expect(verified).toMatchObject({ ok: false, lines: 3, firstBad: { line: 4 } })
    expect(verified.firstBad!.reason).toContain('head anchor "memory:memory.jsonl.head" names 5 lines')
  })

  it('verifyLog reports a log cut and written again to the head\'s length with other lines', async () => {
    const { dir, log } = await anchoredLog(3)
    const original = readFileSync(log, 'utf8')
    rmSync(join(dir, 'memory/memory.jsonl.head'))
    cutAfter(log, 2)
    const other = workspaceJsonlMemoryStore({ checkpointEvery: false }).create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true })
    await other.append(alice, { kind: 'semantic', content: 'another third fact' }, { audit })
    await headWritten()
    const forgedHead = readFileSync(join(dir, 'memory/memory.jsonl.head'), 'utf8')
    writeFileSync(log, original)
    writeFileSync(join(dir, 'memory/memory.jsonl.head'), forgedHead)
    const verified = await verifyLog(createWorkspace({ dir }), KEY)
    expect(verified).toMatchObject({ ok: false, firstBad: { line: 3 } })
    expect(verified.firstBad!.reason).toContain('is not the line the head anchor')
  })

  it('a log that grew past its head opens and verifies', async () => {
    const { dir, adapter } = await anchoredLog(2)
    await adapter.append(alice, { kind: 'semantic', content: 'written after the head' }, { audit })
    expect(await openMemoryLog(createWorkspace({ dir }), KEY).view(state => state.records.size)).toBe(3)
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 3 })
  })

  it('compaction after an erase keeps the head in step: the log opens and verifies', async () => {
    const { dir, adapter } = await anchoredLog(3)
    const [first] = await adapter.export(alice)
    await adapter.hardDelete!(alice, first!.id, { audit })
    await adapter.log.compact()
    expect(await openMemoryLog(createWorkspace({ dir }), KEY).view(state => state.records.size)).toBe(2)
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 4 })
  })
})

describe('verifyLog and the checkpoint', () => {
  it('reports a log cut below what its checkpoint covers, without a head', async () => {
    const { dir, adapter, log, head } = await anchoredLog(3, 10_000)
    expect(await adapter.log.checkpoint()).toBe(true)
    rmSync(head)
    cutAfter(log, 1)
    const verified = await verifyLog(createWorkspace({ dir }), KEY)
    expect(verified).toMatchObject({ ok: false, lines: 1, firstBad: { line: 2 } })
    expect(verified.firstBad!.reason).toContain('checkpoint "memory:memory.jsonl.checkpoint" covers 3 lines')
  })

  it('says nothing of a checkpoint that no open would load (the log was rewritten since)', async () => {
    const { dir, adapter, log, head, checkpoint } = await anchoredLog(2, 10_000)
    expect(await adapter.log.checkpoint()).toBe(true)
    rmSync(head)
    rmSync(log)
    const fresh = workspaceJsonlMemoryStore({ checkpointEvery: false }).create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true })
    for (const content of ['one', 'two', 'three']) await fresh.append(alice, { kind: 'semantic', content }, { audit })
    expect(existsSync(checkpoint)).toBe(true)
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 3 })
  })
})

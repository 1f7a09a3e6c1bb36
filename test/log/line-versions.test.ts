/**
 * Format version 3 lines (docs/log-format.md, "Version 3"): `payloadDigest` and default payload
 * members left out of the line, the digests as before; version 2 logs still open and verify, and
 * erasure writes the payload digest a stripped line needs.
 */
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { canonicalJson, serializeEvent } from '../../src/log/index.ts'
import { memoryFold, strippedMemoryLine, verifyLog } from '../../src/memory/event-log.ts'
import { PAYLOAD_DEFAULTS, PAYLOAD_FIELDS, type MemoryEventDraft } from '../../src/memory/records.ts'
import { sqliteMemoryStore } from '../../src/memory/stores/sqlite.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import type { MemoryTarget } from '../../src/memory/types.ts'
import { createWorkspace } from '../../src/workspace/workspace.ts'

const KEY = 'memory:memory.jsonl'
const alice: MemoryTarget = { store: 'agent', scope: { agent: 'support', user: 'alice' } }
const audit = { via: 'api' }
const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex')
const tempDir = () => mkdtempSync(join(tmpdir(), 'vam-lines-'))
const store = (dir: string) => workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true })
/** Memory event `draft` as a version 2 line (what earlier releases wrote). */
function version2Line(draft: MemoryEventDraft, seq: number, prev: string | null): { line: string; digest: string } {
  return serializeEvent(memoryFold.schema, draft, seq, prev, false, sha, undefined, 2) as { line: string; digest: string }
}
const linesOf = (dir: string) => readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8').trimEnd().split('\n')

/** A log of two version 2 remember lines, as earlier releases wrote them. */
function version2Log(dir: string): string[] {
  const at = '2024-01-01T00:00:00.000Z'
  let prev: string | null = null
  const lines: string[] = []
  for (const [n, content] of ['likes tea', 'owns a cat'].entries()) {
    const draft: MemoryEventDraft = { type: 'remember', recordId: `mem_${String(n).padStart(32, '0')}`, store: 'agent', scope: alice.scope, version: 1, at, audit, kind: 'semantic', content, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: at }
    const line = version2Line(draft, n + 1, prev)
    lines.push(line.line)
    prev = line.digest
  }
  return lines
}

describe('log line versions', () => {
  it('a log of version 2 lines opens and verifies, and version 3 lines appended after them chain on', async () => {
    const dir = tempDir()
    const v2 = version2Log(dir)
    expect(v2.map(line => (JSON.parse(line) as { v: number; payloadDigest?: string }).v)).toEqual([2, 2])
    await createWorkspace({ dir }).append(KEY, `${v2.join('\n')}\n`)
    const adapter = store(dir)
    expect((await adapter.search(alice, { query: 'tea' })).map(hit => hit.record.content)).toEqual(['likes tea'])
    await adapter.append(alice, { kind: 'semantic', content: 'likes jazz' }, { audit })
    const lines = linesOf(dir).map(line => JSON.parse(line) as Record<string, unknown>)
    expect(lines.map(line => line.v)).toEqual([2, 2, 3])
    expect(lines[2]!.prev).toBe(lines[1]!.digest)
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 3 })
    expect((await store(dir).export(alice)).map(record => [record.content, record.tags, record.pinned, record.createdAt === record.updatedAt])).toEqual([['likes tea', [], false, true], ['owns a cat', [], false, true], ['likes jazz', [], false, true]])
  })

  it('a version 3 line is about 190 bytes shorter than the version 2 line of the same event', async () => {
    const dir = tempDir()
    await store(dir).append(alice, { kind: 'semantic', content: 'likes tea' }, { audit })
    const [line] = linesOf(dir)
    const event = JSON.parse(line!) as MemoryEventDraft & Record<string, unknown>
    const { v: _v, seq: _seq, prev: _prev, digest: _digest, ...draft } = event
    const v2 = version2Line({ ...draft, tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: event.at } as MemoryEventDraft, 1, null)
    expect(v2.line.length - line!.length).toBeGreaterThanOrEqual(180)
    expect(v2.digest).not.toBe(event.digest)
  })

  describe('an edited version 3 line does not verify', () => {
    async function edited(edit: (line: Record<string, unknown>) => void): Promise<string | undefined> {
      const dir = tempDir()
      await store(dir).append(alice, { kind: 'semantic', content: 'likes tea' }, { audit })
      const value = JSON.parse(linesOf(dir)[0]!) as Record<string, unknown>
      edit(value)
      writeFileSync(join(dir, 'memory/memory.jsonl'), `${canonicalJson(value)}\n`)
      return (await verifyLog(createWorkspace({ dir }), KEY)).firstBad?.reason
    }

    it('its content changed', async () => {
      expect(await edited((line) => { line.content = 'likes rum' })).toContain('digest does not match')
    })

    it('a default member written out', async () => {
      expect(await edited((line) => { line.tags = [] })).toContain('digest does not match')
    })

    it('a member that was left out as a default given another value', async () => {
      expect(await edited((line) => { line.pinned = true })).toContain('digest does not match')
    })

    it('its payload digest written on a line that is not erased', async () => {
      expect(await edited((line) => { line.payloadDigest = sha('{}') })).toContain('holds payloadDigest only once erased')
    })
  })

  it('erasing a record of version 3 lines writes the payload digest on each stripped line; the chain verifies, and the SQL stores strip the same line', async () => {
    const dir = tempDir()
    const adapter = store(dir)
    const secret = await adapter.append(alice, { kind: 'profile', content: 'card 4111-SECRET', tags: ['SECRET'] }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'likes tea' }, { audit })
    const before = linesOf(dir)[0]!
    const payload = JSON.parse(before) as Record<string, unknown>
    expect(await adapter.hardDelete(alice, secret.id, { audit })).toBe(true)
    const [stripped] = linesOf(dir)
    expect(stripped).not.toContain('SECRET')
    expect(JSON.parse(stripped!)).toMatchObject({ v: 3, erased: true, digest: payload.digest, payloadDigest: sha(canonicalJson({ content: payload.content, kind: payload.kind, tags: payload.tags })) })
    expect(strippedMemoryLine(before, sha)).toBe(stripped)
    // Two remember lines and the erase event.
    expect(await verifyLog(createWorkspace({ dir }), KEY)).toEqual({ ok: true, lines: 3 })
  })

  it('a log of version 3 lines imported into the SQLite store verifies there, and erasing a record of it strips its lines', async () => {
    const dir = tempDir()
    const adapter = store(dir)
    const secret = await adapter.append(alice, { kind: 'profile', content: 'card 4111-SECRET' }, { audit })
    await adapter.append(alice, { kind: 'semantic', content: 'likes tea' }, { audit })
    const factory = sqliteMemoryStore({ file: join(dir, 'store.db') })
    expect(await factory.importLog(readFileSync(join(dir, 'memory/memory.jsonl'), 'utf8'))).toBe(2)
    expect(await factory.verify()).toMatchObject({ ok: true, lines: 2 })
    const sql = factory.create()
    expect(await sql.hardDelete!(alice, secret.id, { audit })).toBe(true)
    const exported = await factory.exportLog()
    expect(exported).not.toContain('SECRET')
    expect(exported.trimEnd().split('\n').map(line => (JSON.parse(line) as { v: number; erased?: true }).erased ?? false)).toEqual([true, false, true])
    expect(await factory.verify()).toMatchObject({ ok: true, lines: 3 })
    await factory.close()
  })

  it('a draft whose scope is frozen (a shared scope) writes the same line as one with an equal scope that is not, every time', () => {
    const at = '2024-01-01T00:00:00.000Z'
    const draftOf = (scope: MemoryEventDraft['scope']): MemoryEventDraft => ({ type: 'remember', recordId: `mem_${'1'.repeat(32)}`, store: 'agent', scope, version: 1, at, audit, kind: 'semantic', content: 'likes tea', tags: [], metadata: {}, pinned: false, supersedes: [], provenance: {}, createdAt: at })
    const write = (scope: MemoryEventDraft['scope']) => (serializeEvent(memoryFold.schema, draftOf(scope), 1, null, false, sha) as { line: string }).line
    const frozen = Object.freeze({ agent: 'support', user: 'alice' })
    const expected = write({ user: 'alice', agent: 'support' })
    expect(write(frozen)).toBe(expected)
    expect(write(frozen)).toBe(expected)
    expect(write(Object.freeze({ agent: 'support', user: 'bob' }))).toBe(write({ agent: 'support', user: 'bob' }))
    expect(write(Object.freeze({ agent: 'support', user: 'bob' }))).not.toBe(expected)
  })

  it('a version 3 line is the canonical JSON of its header and the payload members not at their default, whatever objects the draft holds', () => {
    // The reference: every member through canonicalJson, a member left out when its JSON is its default's (or createdAt equals at).
    const referenceLine = (draft: Record<string, unknown>, seq: number, prev: string | null) => {
      const payload: Record<string, unknown> = {}
      for (const field of PAYLOAD_FIELDS.remember) {
        const value = draft[field]
        if (value === undefined) continue
        if (field in PAYLOAD_DEFAULTS && canonicalJson(value) === canonicalJson(PAYLOAD_DEFAULTS[field])) continue
        if (field === 'createdAt' && value === draft.at) continue
        payload[field] = value
      }
      const header = { v: 3, seq, prev, type: draft.type, store: draft.store, scope: draft.scope, recordId: draft.recordId, version: draft.version, at: draft.at, audit: draft.audit, payloadDigest: sha(canonicalJson(payload)) }
      const digest = sha(canonicalJson(header))
      return { line: canonicalJson({ ...header, ...payload, payloadDigest: undefined, digest }), digest }
    }
    const emptyish = fc.constantFrom<unknown>([], {}, Object.create(null), new Map(), new Date(0), [undefined], { a: undefined }, false, true, null)
    const json = fc.oneof(emptyish, fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.string(), { maxKeys: 2 }))
    const at = '2024-01-01T00:00:00.000Z'
    fc.assert(fc.property(json, json, json, json, json, fc.constantFrom(at, '2023-05-01T00:00:00.000Z'), (tags, metadata, pinned, supersedes, provenance, createdAt) => {
      const draft = { type: 'remember', recordId: `mem_${'0'.repeat(32)}`, store: 'agent', scope: alice.scope, version: 1, at, audit, kind: 'semantic', content: 'likes tea', tags, metadata, pinned, supersedes, provenance, createdAt }
      const written = serializeEvent(memoryFold.schema, draft as unknown as MemoryEventDraft, 7, 'f'.repeat(64), false, sha) as { line: string; digest: string }
      expect(written).toMatchObject(referenceLine(draft, 7, 'f'.repeat(64)))
    }), { numRuns: 300 })
  })

  it('the event a write hands back to the fold is its line as a replay reads it (defaults put back), in version 2 and 3, whatever objects the draft holds', () => {
    // A replay's event: the line parsed, without the chain members, with the members a version 3 line leaves out put back.
    const replayed = (line: string) => {
      const { v, seq, prev, more, digest, payloadDigest, ...event } = JSON.parse(line) as Record<string, unknown>
      return { ...PAYLOAD_DEFAULTS, createdAt: event.at, ...event }
    }
    const value = fc.oneof(fc.constantFrom<unknown>([], {}, new Date(0), [undefined], { b: 1, a: undefined }, -0, Number.NaN, false, true, null), fc.array(fc.string(), { maxLength: 2 }), fc.dictionary(fc.string({ maxLength: 3 }), fc.oneof(fc.string(), fc.double()), { maxKeys: 2 }))
    const at = '2024-01-01T00:00:00.000Z'
    fc.assert(fc.property(value, value, value, value, fc.constantFrom<2 | 3>(2, 3), fc.boolean(), (tags, metadata, provenance, confidence, version, frozenScope) => {
      const scope = frozenScope ? Object.freeze({ ...alice.scope }) : { user: 'alice', agent: 'support' }
      const draft = { type: 'remember', recordId: `mem_${'0'.repeat(32)}`, store: 'agent', scope, version: 1, at, audit: { via: 'api', runId: 'r' }, kind: 'semantic', content: 'likes "tea"\n', tags, metadata, pinned: false, supersedes: [], provenance, confidence, createdAt: at }
      const written = serializeEvent(memoryFold.schema, draft as unknown as MemoryEventDraft, 3, null, true, sha, new Map(), version) as unknown as { line: string; folded: Record<string, unknown> }
      expect(written.folded).toStrictEqual(replayed(written.line))
    }), { numRuns: 300 })
  })
})

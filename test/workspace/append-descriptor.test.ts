import { mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { createWorkspace } from '../../src/workspace/workspace.ts'

// Conditional appends on fs keep one O_APPEND descriptor per file.
const dirs: string[] = []
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})
function folder() {
  const dir = mkdtempSync(join(tmpdir(), 'vam-append-'))
  dirs.push(dir)
  return dir
}

describe('fs conditional append with a kept descriptor', () => {
  it('writes to the new file after the value was replaced, by this workspace or by another writer renaming over it', async () => {
    const dir = folder()
    const workspace = createWorkspace({ dir })
    expect(await workspace.append('log/a.jsonl', 'one\n', { ifSize: 0 })).toBe(true)
    expect(await workspace.replace('log/a.jsonl', 'two\n', { ifSize: 4 })).toBe(true)
    expect(await workspace.append('log/a.jsonl', 'three\n', { ifSize: 4 })).toBe(true)
    expect(readFileSync(join(dir, 'log/a.jsonl'), 'utf8')).toBe('two\nthree\n')
    // Another process compacting: a sibling file renamed over the log.
    writeFileSync(join(dir, 'log/other.tmp'), 'four\n')
    renameSync(join(dir, 'log/other.tmp'), join(dir, 'log/a.jsonl'))
    expect(await workspace.append('log/a.jsonl', 'five\n', { ifSize: 10 })).toBe(false)
    expect(await workspace.append('log/a.jsonl', 'five\n', { ifSize: 5 })).toBe(true)
    expect(readFileSync(join(dir, 'log/a.jsonl'), 'utf8')).toBe('four\nfive\n')
  })

  it('an append called while another write of the same key is under way lands after it (call order)', async () => {
    const dir = folder()
    const workspace = createWorkspace({ dir })
    await workspace.append('a.jsonl', 'one\n', { ifSize: 0 })
    // Let the cross-process lease go, so the truncate below has to take it again first.
    await new Promise(resolve => setImmediate(resolve))
    const truncated = workspace.truncate('a.jsonl', 0, { ifSize: 4 })
    const appended = workspace.append('a.jsonl', 'two\n')
    expect(await Promise.all([truncated, appended])).toEqual([true, true])
    expect(readFileSync(join(dir, 'a.jsonl'), 'utf8')).toBe('two\n')
  })

  it('starts a new file after the value was removed, and appends after a truncation land at the new end', async () => {
    const dir = folder()
    const workspace = createWorkspace({ dir })
    await workspace.append('a.jsonl', 'one\n', { ifSize: 0 })
    await workspace.remove('a.jsonl')
    expect(await workspace.append('a.jsonl', 'two\n', { ifSize: 0 })).toBe(true)
    expect(await workspace.truncate('a.jsonl', 2, { ifSize: 4 })).toBe(true)
    expect(await workspace.append('a.jsonl', '!\n', { ifSize: 2 })).toBe(true)
    expect(readFileSync(join(dir, 'a.jsonl'), 'utf8')).toBe('tw!\n')
  })
})

import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { describe, expect, it } from 'vitest'
import { createWorkspace } from '../../src/workspace/workspace.ts'

/** The error code and message of `task()`, or `'accepted'`. */
function outcome(task: () => unknown): string {
  try {
    task()
    return 'accepted'
  }
  catch (error) {
    const { code, why } = error as { code?: string, why?: string }
    return `${code}: ${why}`
  }
}

describe('createWorkspace() options', () => {
  it('a misspelled key is WORKSPACE_OPTIONS_INVALID naming it, not a workspace in the default folder', () => {
    expect(outcome(() => createWorkspace({ directory: 'var/agent' } as never))).toMatch(/^WORKSPACE_OPTIONS_INVALID: createWorkspace\(\) got unknown option "directory" \(the options are storage, dir, writable\)/)
  })

  it('a dir that is not a non-empty string, a writable that is not a boolean, a driver given as storage, and dir with storage are WORKSPACE_OPTIONS_INVALID', () => {
    expect(outcome(() => createWorkspace({ dir: '' }))).toMatch(/^WORKSPACE_OPTIONS_INVALID: createWorkspace\(\) option "dir" must be a non-empty folder path, got ""/)
    expect(outcome(() => createWorkspace({ writable: 'no' } as never))).toMatch(/^WORKSPACE_OPTIONS_INVALID: createWorkspace\(\) option "writable" must be true or false, got "no"/)
    expect(outcome(() => createWorkspace({ storage: memoryDriver() as never }))).toMatch(/^WORKSPACE_OPTIONS_INVALID: createWorkspace\(\) option "storage" must be an unstorage Storage/)
    expect(outcome(() => createWorkspace({ dir: 'var/agent', storage: createStorage() }))).toMatch(/^WORKSPACE_OPTIONS_INVALID: createWorkspace\(\) got both "dir" and "storage"/)
  })

  it('the documented forms are accepted and work', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vam-ws-options-'))
    for (const workspace of [createWorkspace({ dir }), createWorkspace({ storage: createStorage({ driver: memoryDriver() }), writable: true }), createWorkspace(undefined)]) {
      expect(workspace).toBeDefined()
    }
    const workspace = createWorkspace({ dir, writable: true })
    await workspace.append('notes/a.txt', 'hello')
    expect(await workspace.readText('notes/a.txt')).toBe('hello')
  })
})

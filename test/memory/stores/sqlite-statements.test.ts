import { describe, expect, it } from 'vitest'
import { lazyStatements } from '../../../src/memory/stores/sqlite/statements.ts'

describe('lazyStatements', () => {
  it('a statement is made at its first read, once, and only the ones read are made', () => {
    const made: string[] = []
    const statements = lazyStatements({
      read: () => { made.push('read'); return { source: 'SELECT 1' } },
      write: () => { made.push('write'); return { source: 'INSERT' } },
    })
    expect(made).toEqual([])
    const first = statements.read
    expect(statements.read).toBe(first)
    expect(first.source).toBe('SELECT 1')
    expect(made).toEqual(['read'])
    expect(Object.keys(statements)).toEqual(['read', 'write'])
  })

  it('a maker that throws is run again at the next read (nothing is kept of it)', () => {
    let calls = 0
    const statements = lazyStatements({ flaky: () => { calls++; if (calls === 1) throw new Error('no such table'); return calls } })
    expect(() => statements.flaky).toThrow('no such table')
    expect(statements.flaky).toBe(2)
    expect(statements.flaky).toBe(2)
  })
})

// The architecture as the import graph shows it: no import circle among src/ files, and data
// flows one way between the rooms (tool -> capability -> store -> log / search -> workspace).
import { describe, expect, it } from 'vitest'
import { importCircles, importsOf, sourceFiles } from './imports.ts'

/** The room of a source file: its folder under src/, or the file itself for top-level files. */
function room(file: string): string {
  const parts = file.split('/')
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.ts$/, '')
}

/** The rooms each room may import from (besides itself). */
const ALLOWED: Record<string, readonly string[]> = {
  errors: [],
  instant: [],
  text: [],
  workspace: ['errors'],
  log: ['errors', 'workspace'],
  search: ['errors', 'instant'],
  // The capability also reaches history (erasure removes every copy of an erased text).
  // and src/text (entry checks and prompt escaping shared with the host and history).
  memory: ['errors', 'instant', 'optional-dependency', 'text', 'workspace', 'log', 'search', 'agent', 'history'],
}

const graph = new Map(sourceFiles().map(file => [file, importsOf(file)]))

describe('source layout', () => {
  it('reads the imports of every source file', () => {
    expect(graph.size).toBeGreaterThan(50)
    expect(graph.get('src/memory/event-log.ts')).toContain('src/log/index.ts')
  })

  it('no import circle among src/ files', () => {
    expect(importCircles(graph)).toEqual([])
  })

  for (const [from, allowed] of Object.entries(ALLOWED)) {
    it(`src/${from} imports only from ${allowed.length ? allowed.map(name => `src/${name}`).join(', ') : 'itself'}`, () => {
      const outside = [...graph].flatMap(([file, targets]) => (room(file) === from ? targets.filter(target => room(target) !== from && !allowed.includes(room(target))).map(target => `${file} -> ${target}`) : []))
      expect(outside).toEqual([])
    })
  }
})

describe('importCircles', () => {
  it('finds a circle of three files and leaves the rest of the graph out', () => {
    const circles = importCircles(new Map([['a', ['b']], ['b', ['c']], ['c', ['a', 'd']], ['d', []]]))
    expect(circles).toEqual([['a', 'b', 'c']])
  })

  it('finds a file that imports itself', () => {
    expect(importCircles(new Map([['a', ['a']]]))).toEqual([['a']])
  })
})

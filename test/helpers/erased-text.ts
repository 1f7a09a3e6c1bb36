/**
 * What the erasure tests share: a byte scan of a folder for a text, and the scripted model turn
 * that remembers one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

/** Every file under `dir` (recursively) whose bytes hold `needle` (UTF-8), relative to `dir`, sorted. */
export function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = []
  const bytes = Buffer.from(needle, 'utf8')
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (readFileSync(path).includes(bytes)) found.push(path.slice(dir.length + 1))
    }
  }
  walk(dir)
  return found.sort()
}

/** A scripted model turn that calls `memory_remember` with `content` (kind semantic), tool call id `id`. */
export const rememberTurn = (content: string, id: string) => ({ text: 'Saving.', toolCalls: [{ toolName: 'memory_remember', input: { content, kind: 'semantic' }, toolCallId: id }] })

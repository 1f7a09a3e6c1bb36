/**
 * What the erasure tests share: a byte scan of a folder for a text, and the scripted model turn
 * that remembers one.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { inflateRawSync } from 'node:zlib'

/** Runs of base64 characters long enough to hold a needle (a checkpoint section, a vector, a base64 value). */
const BASE64_RUN = /[A-Za-z0-9+/]{8,}={0,2}/g

/**
 * Whether `bytes` hold `needle` as they are, in a run of base64 text decoded, or in such a run
 * inflated as raw DEFLATE (a checkpoint section): the forms in which this package writes text.
 */
function holds(bytes: Buffer, needle: Buffer): boolean {
  if (bytes.includes(needle)) return true
  for (const [run] of bytes.toString('latin1').matchAll(BASE64_RUN)) {
    const decoded = Buffer.from(run, 'base64')
    if (decoded.includes(needle)) return true
    try {
      if (inflateRawSync(decoded).includes(needle)) return true
    }
    catch {}
  }
  return false
}

/** Every file under `dir` (recursively) whose bytes hold `needle` (UTF-8) as they are, in base64, or in base64 of raw DEFLATE, relative to `dir`, sorted. */
export function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = []
  const bytes = Buffer.from(needle, 'utf8')
  const walk = (folder: string) => {
    for (const name of readdirSync(folder)) {
      const path = join(folder, name)
      if (statSync(path).isDirectory()) walk(path)
      else if (holds(readFileSync(path), bytes)) found.push(path.slice(dir.length + 1))
    }
  }
  walk(dir)
  return found.sort()
}

/** A scripted model turn that calls `memory_remember` with `content` (kind semantic), tool call id `id`. */
export const rememberTurn = (content: string, id: string) => ({ text: 'Saving.', toolCalls: [{ toolName: 'memory_remember', input: { content, kind: 'semantic' }, toolCallId: id }] })

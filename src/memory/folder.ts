/**
 * The agent directory's memory folder (source: slots document, "An agent directory's `memory/`
 * folder is part of the agent"): each Markdown, JSON or JSONL file of
 * `server/agents/<name>/memory/` is a read-only store named after the file, whose items are
 * pinned records the model recalls (`recall_<file>`, and the newest 10 in a
 * `<memory name="file">` block at each run's first model call) but cannot change.
 *
 * Files are read at each invocation and parsed again only when a file's size, modification
 * time or content changed, so an edit in dev reaches the next run without a restart.
 */
import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { basename, extname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createStorage } from 'unstorage'
import memoryDriver from 'unstorage/drivers/memory'
import { agentError } from '../errors.ts'
import { openMemoryLog } from './event-log.ts'
import { createWorkspace } from '../workspace/workspace.ts'
import type { AgentCapability, CapabilityContext } from '../agent/types.ts'
import { memory } from './capability.ts'
import { MEMORY_LIMITS } from './schemas.ts'
import { memoryLogAdapter } from './stores/workspace-jsonl.ts'
import type { MemoryRecordInput, MemoryStoreAdapter, MemoryStoreOptions } from './types.ts'

/** File extensions of the memory folder, in the order they are listed. */
export const MEMORY_FOLDER_EXTENSIONS = ['.md', '.json', '.jsonl'] as const

/** Where the folder's files come from: a folder path or `file:` URL, or the files' texts by file name (for bundles). */
export type MemoryFolderSource = string | URL | Record<string, string>

const STORE_NAME = new RegExp(`^[A-Za-z0-9_-]{1,${MEMORY_LIMITS.namedStoreChars}}$`)

function invalid(file: string, why: string) {
  return agentError('AGENT_MEMORY_FILE_INVALID', `the memory file "${file}" ${why}`, 'fix the file: Markdown list items or paragraphs; JSON an array of strings or { text, title?, tags?, kind? }; JSONL one such value per line', { file })
}

function itemOf(value: unknown, file: string, where: string): MemoryRecordInput {
  if (typeof value === 'string') {
    if (value.trim() === '') throw invalid(file, `has an empty item at ${where}`)
    return { kind: 'semantic', content: value.trim() }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalid(file, `has an item at ${where} that is neither a string nor an object`)
  const item = value as Record<string, unknown>
  const text = item.text ?? item.content
  if (typeof text !== 'string' || text.trim() === '') throw invalid(file, `has an item at ${where} without a text`)
  if (item.title !== undefined && typeof item.title !== 'string') throw invalid(file, `has a title at ${where} that is not a string`)
  if (item.kind !== undefined && (typeof item.kind !== 'string' || item.kind.trim() === '')) throw invalid(file, `has a kind at ${where} that is not a non-empty string`)
  if (item.tags !== undefined && !(Array.isArray(item.tags) && item.tags.every(tag => typeof tag === 'string'))) throw invalid(file, `has tags at ${where} that are not a list of strings`)
  return {
    kind: typeof item.kind === 'string' ? item.kind.trim() : 'semantic',
    content: text.trim(),
    ...(typeof item.title === 'string' ? { title: item.title } : {}),
    ...(Array.isArray(item.tags) ? { tags: item.tags as string[] } : {}),
  }
}

/**
 * The items of one memory file, in file order:
 * - `.md`: each list item (`- `, `* `, `+ ` or `1. `, continuation lines joined) is one item;
 *   a file without list items gives one item per paragraph (headings are left out);
 * - `.json`: an array of strings or `{ text (or content), title?, tags?, kind? }` objects;
 * - `.jsonl`: one such string or object per line (blank lines skipped).
 * Kind defaults to `"semantic"`.
 *
 * @throws AgentError `AGENT_MEMORY_FILE_INVALID` naming the file and the place of the problem.
 */
export function parseMemoryFile(file: string, text: string): MemoryRecordInput[] {
  const ext = extname(file).toLowerCase()
  if (ext === '.json') {
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch (error) {
      throw invalid(file, `is not valid JSON: ${error instanceof Error ? error.message : String(error)}`)
    }
    if (!Array.isArray(value)) throw invalid(file, 'is not a JSON array of items')
    return value.map((item, index) => itemOf(item, file, `index ${index}`))
  }
  if (ext === '.jsonl') {
    return text.split('\n').flatMap((line, index) => {
      if (line.trim() === '') return []
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch {
        throw invalid(file, `line ${index + 1} is not valid JSON`)
      }
      return [itemOf(value, file, `line ${index + 1}`)]
    })
  }
  const lines = text.replace(/\r\n?/g, '\n').split('\n')
  const listItems: string[] = []
  let current: string | undefined
  for (const line of lines) {
    const item = /^\s{0,3}(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line)
    if (item) {
      if (current !== undefined) listItems.push(current)
      current = item[1]!.trim()
    } else if (current !== undefined && line.trim() !== '' && /^\s+/.test(line)) {
      current += ` ${line.trim()}`
    } else if (current !== undefined) {
      listItems.push(current)
      current = undefined
    }
  }
  if (current !== undefined) listItems.push(current)
  const texts = listItems.length > 0
    ? listItems
    : text.replace(/\r\n?/g, '\n').split(/\n\s*\n/).map(block => block.split('\n').filter(line => !/^\s{0,3}#/.test(line)).join(' ').trim())
  return texts.filter(item => item !== '').map(content => ({ kind: 'semantic', content }))
}

interface FolderFile {
  store: string
  file: string
  text: string
  /** ISO 8601: the file's modification time (folders), or a fixed instant (bundled texts). */
  modified: string
}

function readSource(source: MemoryFolderSource): FolderFile[] {
  if (typeof source === 'object' && !(source instanceof URL)) {
    return Object.entries(source).filter(([file]) => (MEMORY_FOLDER_EXTENSIONS as readonly string[]).includes(extname(file).toLowerCase()))
      .map(([file, text]) => ({ store: basename(file, extname(file)), file, text, modified: '2000-01-01T00:00:00.000Z' }))
  }
  const dir = source instanceof URL ? fileURLToPath(source) : source
  if (!existsSync(dir)) return []
  return readdirSync(dir).sort()
    .filter(entry => (MEMORY_FOLDER_EXTENSIONS as readonly string[]).includes(extname(entry).toLowerCase()))
    .map((entry) => {
      const path = join(dir, entry)
      return { store: basename(entry, extname(entry)), file: path, text: readFileSync(path, 'utf8'), modified: statSync(path).mtime.toISOString() }
    })
}

function readOnly(adapter: MemoryStoreAdapter, store: string): MemoryStoreAdapter {
  const refuse = async (): Promise<never> => {
    throw agentError('MEMORY_STORE_READ_ONLY', `memory store "${store}" is the file memory/${store} of the agent directory and is read-only`, 'edit the file instead; the next run reads it again')
  }
  return { search: adapter.search.bind(adapter), read: adapter.read.bind(adapter), export: adapter.export.bind(adapter), append: refuse, delete: refuse }
}

/** A store built from one file's text: an in-memory log holding its items as pinned records (ranked search, recall). */
async function storeOf(file: FolderFile, agent: string): Promise<MemoryStoreAdapter> {
  const adapter = memoryLogAdapter(openMemoryLog(createWorkspace({ storage: createStorage({ driver: memoryDriver() }) }), 'memory:memory.jsonl', { checkpointEvery: false }))
  const target = { store: file.store, scope: { agent } }
  const base = Date.parse(file.modified)
  // File order is recall order: the first item counts as the newest (one millisecond per item).
  for (const [index, item] of parseMemoryFile(file.file, file.text).entries()) {
    await adapter.append(target, { ...item, pinned: true, createdAt: new Date(base - index).toISOString(), provenance: { source: 'file', file: `memory/${basename(file.file)}` } }, { audit: { via: 'file', agent } })
  }
  return readOnly(adapter, file.store)
}

/** The capability {@link memoryFolder} returns: `files()` lists its stores (name, and file as `memory/<file>`) now, without parsing them (for tooling such as `agent memory verify`). */
export interface MemoryFolderCapability extends AgentCapability {
  id: 'memory-folder'
  files(): Array<{ store: string; file: string }>
}

/**
 * The capability of an agent directory's memory folder (id `'memory-folder'`). `source` is the
 * folder (`new URL('./memory/', import.meta.url)` in `server/agents/<name>/agent.ts`), or, for a
 * bundle that does not ship the folder, the files' texts by name (for example Vite's
 * `import.meta.glob('./memory/*', { query: '?raw', import: 'default', eager: true })`).
 *
 * At each invocation it lists the `.md`, `.json` and `.jsonl` files; each is a store named after
 * the file (1-55 characters of `A-Za-z0-9_-`) with scope `{ agent }`, `tools: 'named'`
 * (`recall_<file>` only: the model cannot write), and recall of its 10 newest items at the run's
 * first model call. Its items are pinned records (see {@link parseMemoryFile}). A file is parsed
 * again only when its text changed. A missing folder adds nothing. The CLI and the Vite dev
 * server add this capability for `server/agents/<name>/memory/` themselves when the agent does
 * not.
 *
 * @throws AgentError (from `resolve`) `AGENT_MEMORY_FILE_INVALID` for a file that does not parse
 * or whose name is not a store name; `TOOL_NAME_DUPLICATE` when another capability already has
 * a store with named tools of the same name.
 */
export function memoryFolder(source: MemoryFolderSource): MemoryFolderCapability {
  const cache = new Map<string, { digest: string; adapter: Promise<MemoryStoreAdapter> }>()
  return {
    id: 'memory-folder',
    files: () => readSource(source).map(file => ({ store: file.store, file: `memory/${basename(file.file)}` })),
    async resolve(context: CapabilityContext) {
      const files = readSource(source)
      if (files.length === 0) return
      const stores: Record<string, MemoryStoreOptions> = {}
      for (const file of files) {
        if (!STORE_NAME.test(file.store)) throw invalid(file.file, `is not named like a store (1-${MEMORY_LIMITS.namedStoreChars} characters of A-Za-z0-9_- before the extension)`)
        if (stores[file.store]) throw invalid(file.file, `has the same store name "${file.store}" as another file of the folder`)
        const digest = createHash('sha256').update(`${context.agent}\n${file.modified}\n${file.text}`).digest('hex')
        let entry = cache.get(file.file)
        if (!entry || entry.digest !== digest) {
          entry = { digest, adapter: storeOf(file, context.agent) }
          cache.set(file.file, entry)
          // A file that fails to parse is parsed again at the next run, not cached as failed.
          entry.adapter.catch(() => cache.delete(file.file))
        }
        stores[file.store] = {
          adapter: await entry.adapter,
          scope: { agent: context.agent },
          tools: 'named',
          description: `the agent's file memory/${basename(file.file)} (read-only)`,
          write: { mode: 'off' },
          recall: { maxItems: MEMORY_LIMITS.defaultSearchLimit },
        }
      }
      await memory({ stores }).resolve(context)
    },
  }
}

/**
 * `agent` with the memory folder of its agent directory: when `agentFile` is
 * `server/agents/<name>/agent.<ext>` and `<name>/memory/` exists, a {@link memoryFolder}
 * capability for it is added (unless the agent already has one). Used by the CLI and the Vite
 * dev server when they load an agent.
 */
export function withMemoryFolder<T extends { capabilities: readonly AgentCapability[] }>(agent: T, agentFile: string): T {
  if (!/^agent\.[cm]?[jt]s$/.test(basename(agentFile))) return agent
  const dir = join(agentFile, '..', 'memory')
  if (!existsSync(dir) || agent.capabilities.some(capability => capability.id === 'memory-folder')) return agent
  return { ...agent, capabilities: [...agent.capabilities, memoryFolder(dir)] }
}

/**
 * `memorySlot()`: the slots document's memory slot as one store of `memory()` (source: seed 000,
 * "Memory"). It only validates and returns plain store options, so a slot runs on the same
 * engine, scopes, log and tools code as every other store, and seed 002's `memory({ stores })`
 * contract stays as it is: the slot's name is its key in `stores`.
 */
import { z } from 'zod'
import { agentError } from '../errors.ts'
import { MEMORY_LIMITS, missingAdapterMethods } from './schemas.ts'
import type { MemoryScope, MemoryScopeContext, MemoryStoreAdapter, MemoryStoreFactory, MemoryStoreOptions, MemoryWriteFilter } from './types.ts'
import type { ToolPolicy } from '../agent/types.ts'

/** Options of {@link memorySlot} (slots document, "Configuration options"). Unknown keys are errors. */
export interface MemorySlotOptions {
  /** Where items are stored: `inMemoryMemoryStore()`, `workspaceJsonlMemoryStore()`, `sqliteMemoryStore()` or an adapter. Required. */
  adapter: MemoryStoreAdapter | MemoryStoreFactory
  /**
   * `'global'`: one memory per agent, scope `{ agent }`. `'session'`: one per thread, scope
   * `{ agent, session: threadId }` (a run without `threadId` starts a new thread, so it starts
   * with an empty session memory). A function of `{ agent, run, user, metadata, store }`
   * returning a scope, or `undefined` to switch the slot off for the run (nothing recalled, no
   * tools). Required.
   */
  scope: 'global' | 'session' | ((context: MemoryScopeContext) => MemoryScope | undefined | Promise<MemoryScope | undefined>)
  /** What the slot holds; added to the tool descriptions. At most 500 characters. */
  description?: string
  recall?: {
    /** Recall into the system prompt on each run's first model call. Default `true`. */
    onSessionStart?: boolean
    /** Most items recalled (1..100), and the default `limit` of `recall_<name>`. Default 10. */
    maxItems?: number
    /** `'last-input'`: recall the items found for the run's last user message rather than the newest. Default `'none'`. */
    query?: 'last-input' | 'none'
    /** Most code points of the block, 200..100,000. Default 4,000. */
    maxChars?: number
  }
  /** Which tools the model gets. `remember: false` makes the slot read-only for the model (fill it from code). Both default `true`. */
  expose?: { remember?: boolean; recall?: boolean }
  /** Most items per scope (adding one more drops the oldest non-pinned). Default 1,000. */
  maxItems?: number
  /** Policy of `remember_<name>` (default `'allow'`) and its quality filter (default the built-in one; `false` for none). */
  write?: { policy?: ToolPolicy; filter?: MemoryWriteFilter | false }
}

const slotSchema = z.strictObject({
  adapter: z.custom<MemoryStoreAdapter | MemoryStoreFactory>(value => missingAdapterMethods(value).length === 0 || (typeof value === 'object' && value !== null && typeof (value as { create?: unknown }).create === 'function' && typeof (value as { kind?: unknown }).kind === 'string'),
    { error: 'expected a store: inMemoryMemoryStore(), workspaceJsonlMemoryStore(), sqliteMemoryStore() or an adapter' }),
  scope: z.union([z.literal('global'), z.literal('session'), z.custom<Exclude<MemorySlotOptions['scope'], string>>(value => typeof value === 'function')],
    { error: 'expected "global", "session" or a function of the run returning a scope or undefined' }),
  description: z.string().optional(),
  recall: z.strictObject({
    onSessionStart: z.boolean().optional(),
    maxItems: z.number().int().min(1).max(MEMORY_LIMITS.searchLimit).optional(),
    query: z.enum(['last-input', 'none']).optional(),
    maxChars: z.number().optional(),
  }).optional(),
  expose: z.strictObject({ remember: z.boolean().optional(), recall: z.boolean().optional() }).optional(),
  maxItems: z.number().int().min(1).optional(),
  write: z.strictObject({ policy: z.unknown().optional(), filter: z.unknown().optional() }).optional(),
})

const globalScope = ({ agent }: MemoryScopeContext): MemoryScope => ({ agent })
const sessionScope = ({ agent, run }: MemoryScopeContext): MemoryScope => ({ agent, session: run.threadId })

/**
 * Builds the store options of a memory slot with the slots document's defaults: tools
 * `remember_<name>({ text })` and `recall_<name>({ query?, limit? })` (`tools: 'named'`), recall
 * of the newest 10 items at each run's first model call in a `<memory name="...">` block, at most
 * 1,000 items per scope (oldest dropped). Use it as a store of `memory()`; its key is the slot
 * name, 1-55 characters of `A-Za-z0-9_-`:
 *
 * ```ts
 * memory({ stores: { preferences: memorySlot({ scope: 'session', adapter: workspaceJsonlMemoryStore() }) } })
 * ```
 *
 * The result is plain {@link MemoryStoreOptions}: `memory()` validates it again (the name
 * length, `description`, `recall.maxChars` ...), so spread it to change anything else.
 *
 * @throws AgentError `MEMORY_OPTIONS_INVALID` for an unknown key or a bad value (naming the key),
 * `MEMORY_ADAPTER_REQUIRED` without `adapter`, `MEMORY_SCOPE_REQUIRED` without `scope`.
 */
export function memorySlot(options: MemorySlotOptions): MemoryStoreOptions {
  const parsed = slotSchema.safeParse(options)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    const where = issue.path.length > 0 ? issue.path.join('.') : 'options'
    const value = typeof options === 'object' && options !== null ? options : {}
    if (issue.path[0] === 'adapter' && (value as { adapter?: unknown }).adapter === undefined) {
      throw agentError('MEMORY_ADAPTER_REQUIRED', 'memorySlot() has no adapter', 'pass memorySlot({ adapter: inMemoryMemoryStore(), scope: "global" }) or another store')
    }
    if (issue.path[0] === 'scope' && (value as { scope?: unknown }).scope === undefined) {
      throw agentError('MEMORY_SCOPE_REQUIRED', 'memorySlot() has no scope', 'pass scope: "global", "session" or a function of the run returning a scope')
    }
    const why = issue.code === 'unrecognized_keys' ? `unknown option ${issue.keys.map(k => `"${k}"`).join(', ')} at ${where}` : `invalid value at ${where}: ${issue.message}`
    throw agentError('MEMORY_OPTIONS_INVALID', `memorySlot(): ${why}`, 'use the memorySlot() options: adapter, scope, description, recall.onSessionStart, recall.maxItems, recall.query, recall.maxChars, expose.remember, expose.recall, maxItems, write.policy, write.filter', { issues: parsed.error.issues.map(i => ({ path: i.path.join('.'), message: i.message })) })
  }
  const { adapter, scope, description, recall, expose, maxItems, write } = options
  return {
    adapter,
    scope: scope === 'global' ? globalScope : scope === 'session' ? sessionScope : scope,
    tools: 'named',
    ...(description !== undefined ? { description } : {}),
    read: { tools: { search: expose?.recall ?? true, read: false } },
    write: {
      mode: expose?.remember === false ? 'off' : 'tool',
      ...(write?.policy !== undefined ? { policy: write.policy } : {}),
      ...(write?.filter !== undefined ? { filter: write.filter } : {}),
    },
    retention: { maxItems: maxItems ?? MEMORY_LIMITS.defaultSlotItems },
    recall: {
      onSessionStart: recall?.onSessionStart ?? true,
      maxItems: recall?.maxItems ?? MEMORY_LIMITS.defaultSearchLimit,
      ...(recall?.query !== undefined ? { query: recall.query } : {}),
      ...(recall?.maxChars !== undefined ? { maxChars: recall.maxChars } : {}),
    },
  }
}

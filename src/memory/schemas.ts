/**
 * Zod schemas of `memory()`: the single source of truth for its options and for the four tool
 * inputs. Each tool schema gives the tool's validation, its TypeScript input type and the JSON
 * Schema the model sees (generate it with `z.toJSONSchema(schema, { io: 'input' })` so that fields
 * with defaults, such as `limit`, stay optional for the model).
 */
import { z } from 'zod'
import type { EmbeddingModel } from 'ai'
import { agentError } from '../errors.ts'
import type { AgentError } from '../errors.ts'
import type { ToolPolicy, ToolPolicyDecision } from '../agent/types.ts'
import { suggestedName } from '../agent/define.ts'
import { isInstant, parseInstant } from './records.ts'
import { DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT } from '../search/query.ts'
import { validateScope } from './scope.ts'
import { MEMORY_SCOPE_FIELDS } from './types.ts'
import type { MemoryEnrich, MemoryFusionOptions, MemoryScope, MemoryStoreAdapter, MemoryStoreFactory, MemoryStoreOptions, MemoryWriteFilter } from './types.ts'

/**
 * Size limits of tool inputs (fault class "Oversized input"): a larger value is an input error
 * with a message saying the limit, never a silent truncation.
 *
 * - `contentChars` 8,000 characters of `memory_remember.content`
 * - `titleChars` 200 characters of `title`
 * - `tags` at most 32 tags, each `tagChars` 64 characters (also for `memory_search.tags`)
 * - `metadataBytes` 8,192 bytes of `metadata` serialized as UTF-8 JSON
 * - `provenanceBytes` 2,048 bytes of model-supplied `provenance` serialized as UTF-8 JSON
 * - `reasonChars` 500 characters of `memory_delete.reason`
 * - `queryChars` 1,000 characters of `memory_search.query`
 * - `idChars` 128 characters of a record id; `supersedes` at most 32 ids
 * - `kindChars` 64 characters of a kind; `kinds` at most 32 kinds in a search filter
 * - `searchLimit` `limit` is an integer in 1..100, default `defaultSearchLimit` 10 (also the most
 *   records `recall.preload.limit` and `recall.preflight.limit` take)
 * - `recallWindow` `recall.preflight.conversationWindow` is 1..50 messages
 * - `recallMinChars`..`recallMaxChars` (200..100,000) code points for `recall.maxChars`, default
 *   `defaultRecallChars` 4,000 (recall keeps to a character budget)
 * - `episodeFieldChars` 2,000 characters of each `episode` field
 * - `keywords`, `topics` at most 32 each, each `keywordChars` 64 characters
 * - `descriptionChars` 500 characters of a store's `description`
 * - `namedStoreChars` 55 characters of the name of a store with `tools: 'named'` (so that
 *   `remember_<name>` stays within the 64 characters of a tool name; slots document, "1-55 characters")
 * - `rawExtractChars` 8,000 characters of `rawExtract`; `recallTriggers` at most 32, each
 *   `keywordChars` 64 characters (hosted-memory document, semantic memory structure)
 * - `defaultSlotItems` 1,000 records per scope: the cap `memorySlot()` sets (slots document,
 *   "at most `maxItems` items per scope key (default 1000; adding one more drops the oldest)")
 */
export const MEMORY_LIMITS = {
  contentChars: 8000,
  titleChars: 200,
  tags: 32,
  tagChars: 64,
  metadataBytes: 8192,
  provenanceBytes: 2048,
  reasonChars: 500,
  queryChars: 1000,
  idChars: 128,
  supersedes: 32,
  kindChars: 64,
  kinds: 32,
  searchLimit: MAX_SEARCH_LIMIT,
  defaultSearchLimit: DEFAULT_SEARCH_LIMIT,
  recallWindow: 50,
  recallMinChars: 200,
  recallMaxChars: 100000,
  defaultRecallChars: 4000,
  episodeFieldChars: 2000,
  keywords: 32,
  topics: 32,
  keywordChars: 64,
  descriptionChars: 500,
  namedStoreChars: 55,
  rawExtractChars: 8000,
  recallTriggers: 32,
  defaultSlotItems: 1000,
} as const

/**
 * A retention duration: whole milliseconds (a number), or a string of digits and one unit
 * `ms`, `s`, `m`, `h`, `d` (`'90d'`, `'12h'`). Returns milliseconds, or `undefined` when `value`
 * is not one (or is not positive).
 */
export function parseDuration(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isSafeInteger(value) && value > 0 ? value : undefined
  if (typeof value !== 'string') return undefined
  const match = /^(\d+)(ms|s|m|h|d)$/.exec(value.trim())
  if (!match) return undefined
  const ms = Number(match[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[match[2] as 'ms' | 's' | 'm' | 'h' | 'd']
  return Number.isSafeInteger(ms) && ms > 0 ? ms : undefined
}

const functionOption = <T>(what: string) => z.custom<T>((value) => typeof value === 'function', { error: `expected ${what}` })

/** Store names (source: the Options table, `stores` keys): `^[a-zA-Z0-9_-]{1,64}$`, like tool names. */
export const MEMORY_STORE_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/

/** The five functions a custom adapter implements (source: "A custom adapter implements `search`, `read`, `append`, `delete`, and `export`"). */
export const MEMORY_ADAPTER_METHODS = ['search', 'read', 'append', 'delete', 'export'] as const

const POLICY_DECISIONS = ['allow', 'require-approval', 'deny'] as const satisfies readonly ToolPolicyDecision[]

// An AI SDK embedding model: a provider model object (`doEmbed`) or a gateway model id string.
const embeddingModelSchema = z.custom<EmbeddingModel>(
  (value) => (typeof value === 'string' && value.length > 0) || (typeof value === 'object' && value !== null && typeof (value as { doEmbed?: unknown }).doEmbed === 'function'),
  { error: 'expected an AI SDK EmbeddingModel (an object with doEmbed, for example openai.embedding("text-embedding-3-small"), or a model id string)' },
)

// ---------------------------------------------------------------------------------------------
// Options
// ---------------------------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isFactory(value: unknown): value is MemoryStoreFactory {
  return isRecord(value) && typeof value.kind === 'string' && value.kind.length > 0 && typeof value.create === 'function'
}

/** The adapter methods `value` lacks (all five when it is not an object). */
export function missingAdapterMethods(value: unknown): string[] {
  if (!isRecord(value)) return [...MEMORY_ADAPTER_METHODS]
  return MEMORY_ADAPTER_METHODS.filter((method) => typeof value[method] !== 'function')
}

const adapterSchema = z.custom<MemoryStoreAdapter | MemoryStoreFactory>(
  (value) => isFactory(value) || missingAdapterMethods(value).length === 0,
  { error: 'expected an adapter with search, read, append, delete and export functions, or a factory { kind, create(context) }' },
)

type ScopeFunction = Extract<MemoryStoreOptions['scope'], (...args: never[]) => unknown>

const scopeOptionSchema = z.custom<MemoryScope | ScopeFunction>(
  (value) => typeof value === 'function' || isRecord(value),
  { error: `expected a scope object with fields among ${MEMORY_SCOPE_FIELDS.join(', ')}, or a function of the capability context returning one` },
)

const policySchema = z.union([
  z.enum(POLICY_DECISIONS),
  z.custom<Extract<ToolPolicy, (...args: never[]) => unknown>>((value) => typeof value === 'function'),
], { error: `expected one of ${POLICY_DECISIONS.map((d) => `"${d}"`).join(', ')} or a function of the call returning one` })

/** Options of one store (strict: unknown keys are errors). */
export const memoryStoreOptionsSchema = z.strictObject({
  adapter: adapterSchema.describe('Store implementation: an adapter or a MemoryStoreFactory'),
  description: z.string().trim().min(1, 'description must not be empty when given').max(MEMORY_LIMITS.descriptionChars, `description is at most ${MEMORY_LIMITS.descriptionChars} characters`).optional()
    .describe('What the store holds; added to the description of every tool of the store'),
  tools: z.enum(['shared', 'named']).optional()
    .describe('"shared" (default): the store is served by memory_search, memory_read, memory_remember, memory_delete; "named": remember_<store>({ text }) and recall_<store>({ query?, limit? }) instead'),
  scope: scopeOptionSchema.describe('Scope of every operation on the store, or a function of the context returning it (undefined switches the store off)'),
  allowKinds: z.array(z.string().trim().min(1, 'a kind must be a non-empty string').max(MEMORY_LIMITS.kindChars)).optional()
    .describe('Kinds memory_remember accepts; omitted = all kinds, [] = none'),
  read: z.strictObject({
    tools: z.strictObject({
      search: z.boolean().default(true).describe('Allow memory_search for the store'),
      read: z.boolean().default(true).describe('Allow memory_read for the store'),
    }).optional(),
  }).optional(),
  write: z.strictObject({
    mode: z.enum(['off', 'tool']).default('off').describe('"tool" adds memory_remember and memory_delete'),
    policy: policySchema.default('allow').describe('Policy of the write tools on the store'),
    filter: z.union([z.literal(false), functionOption<MemoryWriteFilter>('a function (candidate, context) returning "accept" or { reject: reason }')], { error: 'expected false (no quality filter) or a function (candidate, context) returning "accept" or { reject: reason }' }).optional()
      .describe('Quality filter of tool writes, run before approval and writing; default the built-in filter, false switches it off'),
    enrich: functionOption<MemoryEnrich>('a function (candidate) returning { keywords?, topics? }').optional()
      .describe('Fills keywords and topics of memory_remember before writing'),
    maxContentLength: z.number().int().min(1).max(MEMORY_LIMITS.contentChars).optional()
      .describe(`Most characters of memory_remember content (1..${MEMORY_LIMITS.contentChars}, default ${MEMORY_LIMITS.contentChars})`),
  }).optional(),
  retention: z.strictObject({
    export: z.boolean().optional().describe('false refuses exports of the store (default true)'),
    hardDelete: z.boolean().optional().describe('Deletes and expiry erase content through the log engine (default false)'),
    maxItems: z.number().int().min(1).optional().describe('Most active records per scope; the oldest non-pinned expire first'),
    maxAge: z.union([z.number(), z.string()]).refine((value) => parseDuration(value) !== undefined, 'expected a positive whole number of milliseconds or a duration such as "90d", "12h", "30m", "45s"').optional()
      .describe('Records older than this stop being returned and are erased'),
  }).optional().describe('Retention: export, hardDelete, maxItems, maxAge'),
  search: z.strictObject({
    mode: z.enum(['ranked', 'substring']).default('ranked'),
    fusion: z.strictObject({
      rrfK: z.number().positive().finite().optional().describe('RRF constant k (> 0), default 10'),
      lexicalDepth: z.number().int().min(1).max(MEMORY_LIMITS.searchLimit).optional().describe(`Full-text candidates fused (1..${MEMORY_LIMITS.searchLimit}), default 100`),
      vectorDepth: z.number().int().min(1).optional().describe('Vector candidates fused (>= 1), default 100'),
      lexicalWeight: z.number().min(0).finite().optional().describe('Weight of the full-text ranking (>= 0), default 1'),
      vectorWeight: z.number().min(0).finite().optional().describe('Weight of the vector ranking (>= 0), default 0.75'),
      neighbourShare: z.number().min(0).finite().optional().describe('Share of a candidate\'s score given to the records written next to it on its event day (>= 0; 0 is off), default 0.5'),
      neighbourSpan: z.number().int().min(0).optional().describe('Records on each side of a candidate that get the share (>= 0), default 2'),
    }).optional().describe('Hybrid fusion settings (with embed); each field defaults to DEFAULT_FUSION'),
  }).optional().describe('How memory_search and preflight recall match: "ranked" (default, BM25 full-text) or "substring" (the documented rule); fusion: the hybrid fusion settings'),
  embed: embeddingModelSchema.optional()
    .describe('An AI SDK EmbeddingModel: search fuses full-text and vector rankings (reciprocal rank fusion)'),
  recall: z.strictObject({
    preload: z.strictObject({
      limit: z.number().int().min(1).max(MEMORY_LIMITS.searchLimit),
      kinds: z.array(z.string().trim().min(1).max(MEMORY_LIMITS.kindChars)).optional(),
    }).optional(),
    preflight: z.strictObject({
      limit: z.number().int().min(1).max(MEMORY_LIMITS.searchLimit),
      conversationWindow: z.number().int().min(1).max(MEMORY_LIMITS.recallWindow),
    }).optional(),
    maxChars: z.number().int().min(MEMORY_LIMITS.recallMinChars).max(MEMORY_LIMITS.recallMaxChars).optional(),
    maxItems: z.number().int().min(1).max(MEMORY_LIMITS.searchLimit).optional(),
    query: z.enum(['last-input', 'none']).optional(),
    onSessionStart: z.boolean().optional(),
  }).refine(recall => recall.preload === undefined || (recall.maxItems === undefined && recall.query === undefined && recall.onSessionStart === undefined), {
    message: 'recall.maxItems, recall.query and recall.onSessionStart describe the recall at the first model call, as recall.preload does: set one or the other',
    path: ['preload'],
  }).optional().describe('Recall into the system prompt: preload (newest at the first model call) and preflight (search before each model call)'),
})

/** Options of `memory()` (strict: unknown keys are errors; `stores` must name at least one store). */
export const memoryOptionsSchema = z.strictObject({
  stores: z.record(
    z.string().regex(MEMORY_STORE_NAME_PATTERN, 'store names match ^[a-zA-Z0-9_-]{1,64}$'),
    memoryStoreOptionsSchema,
  ).refine((stores) => Object.keys(stores).length > 0, 'at least one store is required')
    .superRefine((stores, ctx) => {
      for (const [name, store] of Object.entries(stores)) {
        if (store.tools === 'named' && name.length > MEMORY_LIMITS.namedStoreChars) {
          ctx.addIssue({ code: 'custom', path: [name, 'tools'], message: `a store with tools: 'named' has a name of 1-${MEMORY_LIMITS.namedStoreChars} characters (its tools are remember_<name> and recall_<name>, at most 64 characters); "${name}" has ${name.length}` })
        }
      }
    }),
})

/** One store after validation, with defaults applied. */
export interface MemoryStoreConfig {
  name: string
  adapter: MemoryStoreAdapter | MemoryStoreFactory
  /** A validated static scope, or the scope function (validated at each resolve). */
  scope: MemoryScope | ScopeFunction
  /** `undefined` = all kinds; `[]` = none. */
  allowKinds: readonly string[] | undefined
  search: boolean
  read: boolean
  writeMode: 'off' | 'tool'
  writePolicy: ToolPolicy
  /** `retention` with `maxAge` in milliseconds; `undefined` when not configured. */
  retention: MemoryRetentionConfig | undefined
  /** `description`: added to the store's tool descriptions. */
  description: string | undefined
  /** `tools`, default `'shared'`. */
  tools: 'shared' | 'named'
  /** Default `limit` of `recall_<store>`: `recall.maxItems`, else `recall.preload.limit`, else 10. */
  recallItems: number
  /** `write.filter`: a function, `false` (no filter) or `undefined` (the built-in filter); `write.enrich`; `write.maxContentLength` (default `MEMORY_LIMITS.contentChars`). */
  writeFilter: MemoryWriteFilter | false | undefined
  enrich: MemoryEnrich | undefined
  maxContentLength: number
  /** `search.mode`, default `'ranked'`. */
  searchMode: 'ranked' | 'substring'
  /** `embed`: the embedding model of hybrid search, when configured. */
  embed: EmbeddingModel | undefined
  /** `search.fusion`: the hybrid fusion settings given (each absent field is `DEFAULT_FUSION`'s). */
  fusion: MemoryFusionOptions | undefined
  /** `recall` with `maxChars` filled in; `undefined` when the store recalls nothing into the prompt. */
  recall: MemoryRecallConfig | undefined
}

/** Validated `retention` of one store (see `MemoryRetentionOptions`). */
export interface MemoryRetentionConfig {
  export: boolean
  hardDelete: boolean
  maxItems?: number
  /** `maxAge` in milliseconds. */
  maxAgeMs?: number
}

/** Validated `recall` of one store (see `MemoryStoreOptions.recall`). */
export interface MemoryRecallConfig {
  /** `query: 'last-input'`: the records found for the run's last user message instead of the newest. */
  preload?: { limit: number; kinds?: string[]; query?: 'last-input' }
  preflight?: { limit: number; conversationWindow: number }
  /** Most code points of the store's recall block, default `MEMORY_LIMITS.defaultRecallChars`. */
  maxChars: number
}

function pathText(path: readonly PropertyKey[]): string {
  return path.length === 0 ? 'options' : path.map(String).join('.')
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let value: unknown = root
  for (const key of path) value = isRecord(value) ? value[key as string] : undefined
  return value
}

function optionsError(issue: z.core.$ZodIssue, root: unknown, all: z.core.$ZodIssue[]): AgentError {
  const path = issue.path
  const details = { issues: all.map((i) => ({ path: pathText(i.path), message: i.message })) }
  const store = path[0] === 'stores' && typeof path[1] === 'string' ? path[1] : undefined
  const field = path[2]
  if (path.length === 1 && path[0] === 'stores') {
    // A misspelt `stores` (`store`, `Stores`) is also an unknown key: name it, it is the likely fix.
    const unknown = all.flatMap((i) => (i.code === 'unrecognized_keys' && i.path.length === 0 ? i.keys : []))
    const given = unknown.length > 0 ? ` (it got the unknown option ${unknown.map((k) => `"${k}"`).join(', ')} instead)` : ''
    return agentError('MEMORY_STORES_REQUIRED', `memory() requires a \`stores\` map with at least one named store${given}`, 'pass memory({ stores: { agent: { adapter: workspaceJsonlMemoryStore(), scope: { agent: \'<name>\' } } } })', details)
  }
  if (store !== undefined && path.length === 3 && field === 'adapter') {
    const value = valueAt(root, path)
    const why = value === undefined
      ? `memory store "${store}" has no adapter (stores.${store}.adapter)`
      : `stores.${store}.adapter is not an adapter: it lacks ${missingAdapterMethods(value).join(', ')} and is not a factory with \`kind\` and \`create\``
    return agentError('MEMORY_ADAPTER_REQUIRED', why, `set stores.${store}.adapter to workspaceJsonlMemoryStore(), inMemoryMemoryStore(), an object with search, read, append, delete and export, or a factory { kind, create(context) }`, details)
  }
  if (store !== undefined && path.length === 3 && field === 'scope' && valueAt(root, path) === undefined) {
    return agentError('MEMORY_SCOPE_REQUIRED', `memory store "${store}" has no scope (stores.${store}.scope)`, `set stores.${store}.scope to an object with at least one non-empty field among ${MEMORY_SCOPE_FIELDS.join(', ')}, or to a function of the context returning one`, details)
  }
  if (issue.code === 'invalid_key' && path.length === 2 && path[0] === 'stores') {
    const name = String(path[1])
    const suggestion = suggestedName(name)
    return agentError('MEMORY_OPTIONS_INVALID', `invalid store name ${JSON.stringify(name)} at stores.${name}: a store name is 1-64 characters of letters, digits, "_" and "-" (^[a-zA-Z0-9_-]{1,64}$), because it names the store's tools and workspace keys`, `rename the store${suggestion ? `, for example to ${JSON.stringify(suggestion)}` : ''}`, details)
  }
  const where = pathText(path)
  const why = issue.code === 'unrecognized_keys'
    ? `unknown option ${issue.keys.map((k) => `"${k}"`).join(', ')} at ${where}`
    : issue.code === 'invalid_key'
      ? `invalid store name at ${where}: ${issue.message}`
      : `invalid value at ${where}: ${issue.message}`
  const fix = issue.code === 'unrecognized_keys'
    ? `remove or correct the key (check its spelling against the memory() options: stores.*.adapter, scope, allowKinds, read.tools.search, read.tools.read, write.mode, write.policy, write.filter, write.enrich, write.maxContentLength, retention.export, retention.hardDelete, retention.maxItems, retention.maxAge, search.mode, search.fusion, embed, recall.preload, recall.preflight, recall.maxChars, recall.maxItems, recall.query, recall.onSessionStart, description, tools)`
    : `correct ${where} (see the memory() options table)`
  return agentError('MEMORY_OPTIONS_INVALID', why, fix, details)
}

/**
 * Validates `memory()` options at definition time and applies defaults.
 *
 * Throws `AgentError`: `MEMORY_STORES_REQUIRED` (no `stores` or an empty map),
 * `MEMORY_ADAPTER_REQUIRED` (a store without a usable adapter), `MEMORY_SCOPE_REQUIRED` (a store
 * without a scope, or a static scope with no non-empty field), `MEMORY_SCOPE_INVALID` (a static
 * scope with an unknown field or an empty field next to others), `MEMORY_OPTIONS_INVALID` (any
 * other problem, such as an unknown key like `wirte`). Each error names the store and key path.
 * Source: "`memory()` requires a `stores` map. Each store requires an adapter and a scope with at
 * least one non-empty field."
 */
export function parseMemoryOptions(options: unknown): MemoryStoreConfig[] {
  if (!isRecord(options)) {
    throw agentError('MEMORY_STORES_REQUIRED', 'memory() was called without an options object', 'pass memory({ stores: { agent: { adapter, scope } } })')
  }
  const parsed = memoryOptionsSchema.safeParse(options)
  if (!parsed.success) {
    const issues = parsed.error.issues
    // Report the most actionable issue: a missing stores/adapter/scope before any other.
    const first = issues.find((i) => i.path.length === 1 || i.path[2] === 'adapter' || i.path[2] === 'scope') ?? issues[0]!
    throw optionsError(first, options, issues)
  }
  return Object.entries(parsed.data.stores).map(([name, store]) => ({
    name,
    adapter: store.adapter,
    scope: typeof store.scope === 'function' ? store.scope : validateScope(store.scope, name),
    allowKinds: store.allowKinds,
    search: store.read?.tools?.search ?? true,
    read: store.read?.tools?.read ?? true,
    writeMode: store.write?.mode ?? 'off',
    writePolicy: store.write?.policy ?? 'allow',
    retention: store.retention && {
      export: store.retention.export ?? true,
      hardDelete: store.retention.hardDelete ?? false,
      ...(store.retention.maxItems !== undefined ? { maxItems: store.retention.maxItems } : {}),
      ...(store.retention.maxAge !== undefined ? { maxAgeMs: parseDuration(store.retention.maxAge)! } : {}),
    },
    writeFilter: store.write?.filter,
    enrich: store.write?.enrich,
    maxContentLength: store.write?.maxContentLength ?? MEMORY_LIMITS.contentChars,
    searchMode: store.search?.mode ?? 'ranked',
    embed: store.embed,
    fusion: store.search?.fusion,
    description: store.description,
    tools: store.tools ?? 'shared',
    recallItems: store.recall?.maxItems ?? store.recall?.preload?.limit ?? MEMORY_LIMITS.defaultSearchLimit,
    recall: recallConfig(store.recall),
  }))
}

/**
 * The recall of one store: `preload` / `preflight` as given, or the slots document's keys turned
 * into a preload: with `onSessionStart` (default `true` once `maxItems` or `query` is given),
 * `maxItems` (default 10) records at the first model call, newest first, or with
 * `query: 'last-input'` those found for the run's last user message.
 */
function recallConfig(recall: z.output<typeof memoryStoreOptionsSchema>['recall']): MemoryRecallConfig | undefined {
  if (!recall) return undefined
  const slotKeys = recall.maxItems !== undefined || recall.query !== undefined || recall.onSessionStart !== undefined
  const preload = recall.preload ?? (slotKeys && recall.onSessionStart !== false
    ? { limit: recall.maxItems ?? MEMORY_LIMITS.defaultSearchLimit, ...(recall.query === 'last-input' ? { query: 'last-input' as const } : {}) }
    : undefined)
  if (!preload && !recall.preflight) return undefined
  return {
    ...(preload ? { preload } : {}),
    ...(recall.preflight ? { preflight: recall.preflight } : {}),
    maxChars: recall.maxChars ?? MEMORY_LIMITS.defaultRecallChars,
  }
}

// ---------------------------------------------------------------------------------------------
// Tool inputs
// ---------------------------------------------------------------------------------------------

function jsonBytes(value: unknown): number {
  return new TextEncoder().encode(JSON.stringify(value)).length
}

const storeField = z.string().min(1).max(64)
  .describe('Memory store name. Omit it when there is one store for this tool or a store named "agent"; otherwise pass one of the stores listed in the tool description')

const idField = z.string().trim().min(1, 'id must not be empty').max(MEMORY_LIMITS.idChars, `id is at most ${MEMORY_LIMITS.idChars} characters`)

const kindField = z.string().trim().min(1, 'kind must not be empty').max(MEMORY_LIMITS.kindChars, `kind is at most ${MEMORY_LIMITS.kindChars} characters`)

const tagsField = z.array(
  z.string().trim().min(1, 'a tag must not be empty').max(MEMORY_LIMITS.tagChars, `a tag is at most ${MEMORY_LIMITS.tagChars} characters`),
).max(MEMORY_LIMITS.tags, `at most ${MEMORY_LIMITS.tags} tags`)

const SINGULAR = { keywords: 'keyword', topics: 'topic', recallTriggers: 'recall trigger' } as const

const keywordsField = (name: keyof typeof SINGULAR, max: number) => z.array(
  z.string().trim().min(1, `a ${SINGULAR[name]} must not be empty`).max(MEMORY_LIMITS.keywordChars, `a ${SINGULAR[name]} is at most ${MEMORY_LIMITS.keywordChars} characters`),
).max(max, `at most ${max} ${name}`)

const episodeText = (field: string, required: boolean) => {
  const text = z.string().trim().max(MEMORY_LIMITS.episodeFieldChars, `episode.${field} is at most ${MEMORY_LIMITS.episodeFieldChars.toLocaleString('en-US')} characters`)
  return required ? text.min(1, `episode.${field} must not be empty`) : text.min(1, `episode.${field} must not be empty when given`).optional()
}

/** An episode of an episodic record (hosted-memory document): `observation` required, `thoughts`, `action`, `result` optional, each at most 2,000 characters. */
export const memoryEpisodeSchema = z.strictObject({
  observation: episodeText('observation', true).describe('What happened: user input, context, problem'),
  thoughts: episodeText('thoughts', false).describe('Why you chose your approach'),
  action: episodeText('action', false).describe('What you did: tool calls, answers, steps'),
  result: episodeText('result', false).describe('What came of it and what you learned'),
})

const instantField = z.string().refine(isInstant, 'expected an ISO 8601 instant with a time zone, for example 2025-01-31T09:00:00Z or 2025-01-31T10:00:00+01:00, or a date such as 2025-01-31 (midnight UTC)')

/** Input of `memory_search` (source: the tool contract table). */
export const memorySearchInputSchema = z.strictObject({
  query: z.string().trim().min(1, 'query must contain words to search for').max(MEMORY_LIMITS.queryChars, `query is at most ${MEMORY_LIMITS.queryChars} characters`)
    .describe('Words or a short question to find in the title, content and tags of records; records containing it as one phrase (case-insensitive) are always included'),
  store: storeField.optional(),
  kinds: z.array(kindField).max(MEMORY_LIMITS.kinds, `at most ${MEMORY_LIMITS.kinds} kinds`).optional()
    .describe('Only records of these kinds, for example ["semantic", "profile"]'),
  tags: tagsField.optional().describe('Only records carrying these tags'),
  keywords: keywordsField('keywords', MEMORY_LIMITS.keywords).optional().describe('Only records carrying all these keywords'),
  topics: keywordsField('topics', MEMORY_LIMITS.topics).optional().describe('Only records about at least one of these topics'),
  after: instantField.optional().describe('Only records created at or after this ISO 8601 instant (with Z or an offset; a bare date means midnight UTC)'),
  before: instantField.optional().describe('Only records created before this ISO 8601 instant (with Z or an offset; a bare date means midnight UTC)'),
  occurredAfter: instantField.optional().describe('Only records of things that happened at or after this ISO 8601 instant or date (their occurredAt, else when they were saved)'),
  occurredBefore: instantField.optional().describe('Only records of things that happened before this ISO 8601 instant or date (their occurredAt, else when they were saved)'),
  limit: z.number().int('limit must be a whole number').min(1, 'limit must be at least 1').max(MEMORY_LIMITS.searchLimit, `limit is at most ${MEMORY_LIMITS.searchLimit}`)
    .default(MEMORY_LIMITS.defaultSearchLimit).describe(`Most results to return, 1 to ${MEMORY_LIMITS.searchLimit}; default ${MEMORY_LIMITS.defaultSearchLimit}`),
}).refine((input) => input.after === undefined || input.before === undefined || parseInstant(input.after)! < parseInstant(input.before)!, {
  message: '`after` must be earlier than `before`',
  path: ['after'],
}).refine((input) => input.occurredAfter === undefined || input.occurredBefore === undefined || parseInstant(input.occurredAfter)! < parseInstant(input.occurredBefore)!, {
  message: '`occurredAfter` must be earlier than `occurredBefore`',
  path: ['occurredAfter'],
})

/** Input of `memory_read` (source: the tool contract table). */
export const memoryReadInputSchema = z.strictObject({
  id: idField.describe('Id of the record to read, as returned by memory_search or memory_remember'),
  store: storeField.optional(),
})

/** Input of `memory_remember` (source: the tool contract table). */
export const memoryRememberInputSchema = z.strictObject({
  content: z.string()
    .max(MEMORY_LIMITS.contentChars, `content is longer than ${MEMORY_LIMITS.contentChars.toLocaleString('en-US')} characters: remember a shorter summary or split it into several records`)
    .refine((s) => s.trim().length > 0, 'content must not be empty')
    .describe(`The fact, event or instruction to remember, in plain text (at most ${MEMORY_LIMITS.contentChars.toLocaleString('en-US')} characters)`),
  kind: kindField.describe('Kind of memory, for example "semantic" (facts), "episodic" (events), "procedural" (how-to) or "profile" (about the user); the store may accept only some kinds'),
  store: storeField.optional(),
  title: z.string().trim().min(1, 'title must not be empty when given').max(MEMORY_LIMITS.titleChars, `title is at most ${MEMORY_LIMITS.titleChars} characters`).optional()
    .describe('Short title of the record'),
  tags: tagsField.optional().describe(`Tags for later search (at most ${MEMORY_LIMITS.tags}, each at most ${MEMORY_LIMITS.tagChars} characters)`),
  metadata: z.record(z.string(), z.json())
    .refine((m) => jsonBytes(m) <= MEMORY_LIMITS.metadataBytes, `metadata is larger than ${MEMORY_LIMITS.metadataBytes} bytes as JSON: keep only small fields`)
    .optional().describe(`Extra JSON fields (at most ${MEMORY_LIMITS.metadataBytes} bytes as JSON)`),
  pinned: z.boolean().optional().describe('Mark the record as important'),
  confidence: z.number().min(0, 'confidence is between 0 and 1').max(1, 'confidence is between 0 and 1').optional()
    .describe('How sure you are of the content, from 0 to 1'),
  episode: memoryEpisodeSchema.optional()
    .describe('Only with kind "episodic": the experience as observation, thoughts, action and result'),
  keywords: keywordsField('keywords', MEMORY_LIMITS.keywords).optional()
    .describe(`Search keywords (at most ${MEMORY_LIMITS.keywords}, each at most ${MEMORY_LIMITS.keywordChars} characters)`),
  topics: keywordsField('topics', MEMORY_LIMITS.topics).optional()
    .describe(`Broad topics such as "food" or "billing" (at most ${MEMORY_LIMITS.topics})`),
  rawExtract: z.string().trim().min(1, 'rawExtract must not be empty when given').max(MEMORY_LIMITS.rawExtractChars, `rawExtract is at most ${MEMORY_LIMITS.rawExtractChars.toLocaleString('en-US')} characters`).optional()
    .describe('The words the user actually said that this record was taken from, verbatim'),
  recallTriggers: keywordsField('recallTriggers', MEMORY_LIMITS.recallTriggers).optional()
    .describe(`Short phrases of later questions this record should answer, for example "shopping habits" (at most ${MEMORY_LIMITS.recallTriggers}; searchable like tags)`),
  supersedes: z.array(idField).max(MEMORY_LIMITS.supersedes, `at most ${MEMORY_LIMITS.supersedes} ids`).optional()
    .describe('Ids of active records in this store that this record replaces; they are marked superseded'),
  occurredAt: instantField.optional()
    .describe('When the remembered thing happened, if known and not now: a date such as 2025-01-31 or an instant such as 2025-01-31T09:00:00Z (not when you save it)'),
  provenance: z.looseObject({
    runId: z.string().optional(),
    threadId: z.string().optional(),
    source: z.string().optional(),
    toolName: z.string().optional(),
  }).catchall(z.json())
    .refine((p) => jsonBytes(p) <= MEMORY_LIMITS.provenanceBytes, `provenance is larger than ${MEMORY_LIMITS.provenanceBytes} bytes as JSON`)
    .optional().describe('Where the information came from; fields given here replace the defaults taken from the current run'),
}).refine((input) => input.episode === undefined || input.kind === 'episodic', {
  message: '`episode` is only for kind "episodic": pass kind "episodic" or leave `episode` out',
  path: ['episode'],
})

/** Input of `memory_delete` (source: the tool contract table). */
export const memoryDeleteInputSchema = z.strictObject({
  id: idField.describe('Id of the record to delete (soft delete: the record stops appearing in search and read)'),
  store: storeField.optional(),
  reason: z.string().trim().min(1, 'reason must not be empty when given').max(MEMORY_LIMITS.reasonChars, `reason is at most ${MEMORY_LIMITS.reasonChars} characters`).optional()
    .describe('Why the record is deleted'),
})

/** Validated input of `memory_search` (`limit` filled with its default). */
export type MemorySearchInput = z.output<typeof memorySearchInputSchema>
/** Validated input of `memory_read`. */
export type MemoryReadInput = z.output<typeof memoryReadInputSchema>
/** Validated input of `memory_remember`. */
export type MemoryRememberInput = z.output<typeof memoryRememberInputSchema>
/** Validated input of `memory_delete`. */
export type MemoryDeleteInput = z.output<typeof memoryDeleteInputSchema>

/**
 * Input of `remember_<store>` (slots document: "a `remember_<name>` tool (input `{ text }`) to
 * store a new item"). The item is saved as a record of the store's first allowed kind
 * (default `"semantic"`), through the same checks as `memory_remember`.
 */
export const slotRememberInputSchema = z.strictObject({
  text: z.string()
    .max(MEMORY_LIMITS.contentChars, `text is longer than ${MEMORY_LIMITS.contentChars.toLocaleString('en-US')} characters: remember a shorter item`)
    .refine((s) => s.trim().length > 0, 'text must not be empty')
    .describe('The item to remember: one short, self-contained, lasting fact in plain text, for example "The user wants answers in French."'),
})

/**
 * Input of `recall_<store>` (slots document: "a `recall_<name>` tool (input `{ query?, limit? }`)
 * to search the slot, newest items first"). Without `query`: the newest items; with it: the
 * store's search, best match first. `limit` defaults to the store's `recall.maxItems` (10).
 */
export const slotRecallInputSchema = z.strictObject({
  query: z.string().trim().min(1, 'query must contain words to search for when given').max(MEMORY_LIMITS.queryChars, `query is at most ${MEMORY_LIMITS.queryChars} characters`).optional()
    .describe('Words to look for; omit it to get the newest items'),
  limit: z.number().int('limit must be a whole number').min(1, 'limit must be at least 1').max(MEMORY_LIMITS.searchLimit, `limit is at most ${MEMORY_LIMITS.searchLimit}`).optional()
    .describe(`Most items to return, 1 to ${MEMORY_LIMITS.searchLimit}; default the store's recall.maxItems (10 unless configured)`),
})

/** Validated input of `remember_<store>`. */
export type SlotRememberInput = z.output<typeof slotRememberInputSchema>
/** Validated input of `recall_<store>`. */
export type SlotRecallInput = z.output<typeof slotRecallInputSchema>

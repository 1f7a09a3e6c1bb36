/**
 * The studio's routes, added to the agent routes when `createAgentRoutes({ studio })` is on (always
 * in the Vite plugin and `agent studio`; in production only when asked). Same identity rule as
 * every other route: each data route asks `identify(event)` first and answers only about that
 * identity's threads and memory scope. See docs/studio.md for the table.
 */
import type { H3, H3Event } from 'h3'
import { z } from 'zod'
import { agentError } from '../errors.ts'
import { listApprovals } from '../agent/approvals.ts'
import { sameIdentity } from '../agent/identity.ts'
import { messageText, readThread } from '../agent/threads.ts'
import type { AgentDefinition } from '../agent/types.ts'
import { importMemoryScope } from '../memory/retention.ts'
import type { ResolvedMemoryStore } from '../memory/open-store.ts'
import type { MemoryRecord } from '../memory/types.ts'
import { foldText, stemWord, tokenize } from '../search/text.ts'
import { noLog, storeConfigs } from './inspector.ts'
import { storeLog, type StoreLog } from './store-log.ts'
import { studioAsset } from './studio-assets.ts'
import { journalRun, listThreads, readJournal } from './studio-journal.ts'
import { logScopes, pageScopeLines, recordLines, scopeKey } from './studio-log.ts'
import { startAction, studioActionSchema } from './studio-actions.ts'
import { runResponse } from './stream.ts'
import type { AgentIdentity, AgentSource } from './types.ts'

/** What the agent routes lend the studio routes (their identity check, validation and lookups). */
export interface StudioRouteKit {
  app: H3
  prefix: string
  mode: 'dev' | 'production'
  agents: AgentSource
  devUsers: readonly string[]
  /** Folder of the built UI; default `dist/studio` of this package. */
  assetsDir?: string
  route: (handler: (event: H3Event, identity: AgentIdentity) => unknown) => (event: H3Event) => Promise<unknown>
  agentOf: (event: H3Event) => Promise<AgentDefinition>
  opened: (event: H3Event, identity: AgentIdentity) => Promise<{ agent: AgentDefinition; store: ResolvedMemoryStore }>
  query: <T>(event: H3Event, schema: z.ZodType<T>) => T
  body: <T>(event: H3Event, schema: z.ZodType<T>) => Promise<T>
  /** Reads the body of an import (a scope export), allowed up to {@link STUDIO_IMPORT_MAX_BYTES}. */
  importBody: <T>(event: H3Event, schema: z.ZodType<T>) => Promise<T>
  param: (event: H3Event, name: string) => string
  recordDetail: (agent: AgentDefinition, store: ResolvedMemoryStore, id: string) => Promise<{ record: MemoryRecord }>
  errorResponse: (error: unknown) => Response
}

/**
 * Largest scope export the studio's import accepts: 64 MiB (a 10,000-record export is about
 * 5 MB), above the routes' `maxBodyBytes` for every other body.
 */
export const STUDIO_IMPORT_MAX_BYTES = 64 * 1024 * 1024

const dateField = z.string().trim().regex(/^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/, 'use YYYY-MM-DD or an ISO 8601 instant').optional()

const tableQuerySchema = z.strictObject({
  status: z.enum(['active', 'all', 'superseded', 'deleted']).default('active'),
  kind: z.string().trim().min(1).max(64).optional(),
  tag: z.string().trim().min(1).max(64).optional(),
  pinned: z.enum(['true', 'false']).optional(),
  createdFrom: dateField,
  createdTo: dateField,
  eventFrom: dateField,
  eventTo: dateField,
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(50),
})

const linesQuerySchema = z.strictObject({
  offset: z.coerce.number().int().min(0).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
})

/** Start of a range: the instant, or midnight UTC of a bare date. */
function lower(value: string | undefined): number | undefined {
  return value === undefined ? undefined : Date.parse(value.length === 10 ? `${value}T00:00:00Z` : value)
}

/** End of a range (exclusive): the instant just after it, or the midnight after a bare date. */
function upper(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  return value.length === 10 ? Date.parse(`${value}T00:00:00Z`) + 86_400_000 : Date.parse(value) + 1
}

/** A page of the records table with the kinds and tags present in the scope (for the filter pickers). */
export interface RecordTablePage {
  store: string
  scope: Record<string, string>
  total: number
  offset: number
  limit: number
  records: MemoryRecord[]
  kinds: string[]
  tags: string[]
}

/**
 * Filters, newest first, and cuts one page of the scope's records: `status`, `kind`, `tag`,
 * `pinned`, `createdFrom`/`createdTo` (on `createdAt`, the time the fact is dated) and
 * `eventFrom`/`eventTo` (on `updatedAt`, the record's latest event), dates inclusive.
 */
export function tablePage(all: readonly MemoryRecord[], filter: z.output<typeof tableQuerySchema>, where: { store: string; scope: Record<string, string> }): RecordTablePage {
  const range = (from: string | undefined, to: string | undefined) => ({ from: lower(from), to: upper(to) })
  const created = range(filter.createdFrom, filter.createdTo)
  const evented = range(filter.eventFrom, filter.eventTo)
  const inside = (instant: string, bounds: { from: number | undefined; to: number | undefined }) => {
    if (bounds.from === undefined && bounds.to === undefined) return true
    const at = Date.parse(instant)
    return (bounds.from === undefined || at >= bounds.from) && (bounds.to === undefined || at < bounds.to)
  }
  const kinds = new Set<string>()
  const tags = new Set<string>()
  const kept: MemoryRecord[] = []
  for (let index = all.length - 1; index >= 0; index--) {
    const record = all[index]!
    kinds.add(record.kind)
    for (const tag of record.tags) tags.add(tag)
    if (filter.status !== 'all' && record.status !== filter.status) continue
    if (filter.kind !== undefined && record.kind !== filter.kind) continue
    if (filter.tag !== undefined && !record.tags.includes(filter.tag)) continue
    if (filter.pinned !== undefined && record.pinned !== (filter.pinned === 'true')) continue
    if (!inside(record.createdAt, created) || !inside(record.updatedAt, evented)) continue
    kept.push(record)
  }
  return {
    ...where, total: kept.length, offset: filter.offset, limit: filter.limit, records: kept.slice(filter.offset, filter.offset + filter.limit),
    kinds: [...kinds].sort(), tags: [...tags].sort(),
  }
}

/** `[start, end)` UTF-16 ranges of the words of `text` whose index term is one of the query's terms. */
export function highlightRanges(text: string, query: string): [number, number][] {
  const terms = new Set(tokenize(query))
  if (terms.size === 0) return []
  const ranges: [number, number][] = []
  for (const match of text.matchAll(/[\p{L}\p{N}]+/gu)) {
    if (terms.has(stemWord(foldText(match[0])))) ranges.push([match.index, match.index + match[0].length])
  }
  return ranges
}

/** Versions of a supersede chain through `record`, oldest first: the records it supersedes (recursively) and those that superseded it. */
export async function versionChain(store: ResolvedMemoryStore, record: MemoryRecord): Promise<MemoryRecord[]> {
  const seen = new Set<string>([record.id])
  const older: MemoryRecord[] = []
  let frontier = [...record.supersedes]
  while (frontier.length && seen.size < 200) {
    const next: string[] = []
    for (const id of frontier) {
      if (seen.has(id)) continue
      seen.add(id)
      const found = await store.adapter.read(store.target, id)
      if (!found) continue
      older.unshift(found)
      next.push(...found.supersedes)
    }
    frontier = next
  }
  const newer: MemoryRecord[] = []
  let cursor = record.supersededBy
  while (cursor && !seen.has(cursor)) {
    seen.add(cursor)
    const found = await store.adapter.read(store.target, cursor)
    if (!found) break
    newer.push(found)
    cursor = found.supersededBy
  }
  return [...older.sort((a, b) => a.createdAt.localeCompare(b.createdAt)), record, ...newer]
}

function logOf(agent: AgentDefinition, store: string): Promise<StoreLog | undefined> {
  const config = storeConfigs(agent).find(candidate => candidate.name === store)
  return config ? storeLog(agent, config) : Promise.resolve(undefined)
}

/**
 * User ids found in the memory scopes of every agent's logs (the `user` field of a scope): the
 * dev user picker offers them besides the configured users, so a scope that came from an import
 * (a LoCoMo speaker) can be opened.
 */
export async function discoverScopeUsers(agents: AgentSource): Promise<string[]> {
  const users = new Set<string>()
  for (const name of await agents.list()) {
    const agent = await agents.load(name).catch(() => undefined)
    if (!agent) continue
    for (const store of storeConfigs(agent).map(config => config.name)) {
      const log = await logOf(agent, store).catch(() => undefined)
      if (!log) continue
      for (const found of await logScopes(log.workspace, log.key, store)) if (typeof found.scope.user === 'string') users.add(found.scope.user)
    }
  }
  return [...users].sort()
}

/** Registers the studio routes on `kit.app` (before the catch-all of unknown paths). */
export function registerStudioRoutes(kit: StudioRouteKit): void {
  const { app, prefix, route, agentOf, opened, query, body, param } = kit

  const asset = (path: string) => async () => {
    try {
      return await studioAsset(path, kit.assetsDir)
    } catch (error) {
      return kit.errorResponse(error)
    }
  }
  // `<prefix>/studio` redirects to `<prefix>/studio/`, so the UI's relative asset URLs resolve under it.
  app.get(`${prefix}/studio`, event => (new URL(event.req.url).pathname.endsWith('/') ? asset('')() : new Response(null, { status: 308, headers: { location: `${prefix}/studio/` } })))
  app.get(`${prefix}/studio/**`, (event) => asset(new URL(event.req.url).pathname.slice(`${prefix}/studio/`.length))())

  app.get(`${prefix}/studio-users`, route(async (_event, identity) => {
    if (kit.mode !== 'dev') return { users: [identity.id] }
    return { users: [...new Set([...kit.devUsers, ...await discoverScopeUsers(kit.agents)])] }
  }))

  app.get(`${prefix}/agents/:agent/threads`, route(async (event, identity) => ({ threads: await listThreads(await agentOf(event), identity) })))

  app.get(`${prefix}/agents/:agent/threads/:thread/journal`, route(async (event, identity) => {
    const agent = await agentOf(event)
    const threadId = param(event, 'thread')
    const journal = await readJournal(agent, threadId, identity)
    const thread = journal ? undefined : await readThread(agent, threadId, { user: identity })
    if (!journal && !thread) throw agentError('THREAD_NOT_FOUND', `there is no thread "${threadId}" of yours for this agent`, 'pick a thread from the thread list, or start one by sending a message', { threadId })
    const approvals = (await listApprovals(agent, { threadId })).filter(approval => sameIdentity(approval.user, identity))
    // A thread run outside the studio (the CLI, code) has no journal: its transcript text stands in.
    const messages = thread ? thread.messages.filter(message => message.role === 'user' || message.role === 'assistant').map(message => ({ role: message.role, text: messageText(message) })).filter(message => message.text !== '') : []
    return { threadId, title: journal?.title ?? messages[0]?.text.slice(0, 120) ?? '', runs: journal?.runs ?? [], messages, approvals }
  }))

  app.get(`${prefix}/agents/:agent/stores/:store/scopes`, route(async (event, identity) => {
    const { agent, store } = await opened(event, identity)
    const log = await logOf(agent, store.store)
    const own = scopeKey(store.store, store.target.scope)
    const found = log ? await logScopes(log.workspace, log.key, store.store) : []
    // In production only the identity's own scope is named; the dev studio lists every scope of the log.
    const scopes = kit.mode === 'dev' ? found : found.filter(entry => scopeKey(entry.store, entry.scope) === own)
    return { store: store.store, current: store.target.scope, scopes }
  }))

  app.get(`${prefix}/agents/:agent/stores/:store/table`, route(async (event, identity) => {
    const { store } = await opened(event, identity)
    const filter = query(event, tableQuerySchema)
    return tablePage(await store.adapter.export(store.target), filter, { store: store.store, scope: store.target.scope })
  }))

  app.get(`${prefix}/agents/:agent/stores/:store/records/:id/versions`, route(async (event, identity) => {
    const { agent, store } = await opened(event, identity)
    const { record } = await kit.recordDetail(agent, store, param(event, 'id'))
    const versions = await versionChain(store, record)
    const log = await logOf(agent, store.store)
    const events = log ? await recordLines(log.workspace, log.key, store.store, store.target.scope, new Set(versions.map(version => version.id))) : []
    return { id: record.id, versions, events }
  }))

  app.get(`${prefix}/agents/:agent/stores/:store/lines`, route(async (event, identity) => {
    const { agent, store } = await opened(event, identity)
    const log = await logOf(agent, store.store)
    if (!log) throw noLog(store.store)
    const page = query(event, linesQuerySchema)
    const first = await pageScopeLines(log.workspace, log.key, store.store, store.target.scope, { offset: 0, limit: 0 })
    // Without an offset, the last page (the newest lines).
    const offset = page.offset ?? Math.max(0, first.total - page.limit)
    return { store: store.store, scope: store.target.scope, ...await pageScopeLines(log.workspace, log.key, store.store, store.target.scope, { offset, limit: page.limit }) }
  }))

  app.post(`${prefix}/agents/:agent/stores/:store/import`, route(async (event, identity) => {
    const { agent, store } = await opened(event, identity)
    const data = await kit.importBody(event, z.looseObject({ records: z.array(z.unknown()) }))
    return importMemoryScope(store.adapter, store.target, data, { audit: { via: 'import', agent: agent.name, user: identity.id } })
  }))

  app.post(`${prefix}/agents/:agent/stores/:store/records/:id/actions`, route(async (event, identity) => {
    const { agent, store } = await opened(event, identity)
    const action = await body(event, studioActionSchema)
    const { record } = await kit.recordDetail(agent, store, param(event, 'id'))
    const { run, label } = startAction(agent, identity, record, action)
    const journalled = await journalRun(agent, run, { threadId: run.threadId, identity, kind: 'action', input: label, origin: 'studio' })
    return runResponse(journalled, event.req.headers.get('accept'), 200, undefined, kit.mode)
  }))
}

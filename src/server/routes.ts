/**
 * The agent routes (h3 v2), shared by the Vite dev plugin and the production handler.
 *
 * Every route first asks `identify(event)` for the verified identity and refuses the request
 * (401) without one; scope values come only from that identity and the agent's configuration,
 * never from the request, so a client cannot reach another user's memory. Request bodies and
 * queries are validated with zod; every error is JSON `{ error: { code, message, why, fix, details? } }`.
 */
import { H3, getQuery, getRouterParam, type H3Event } from 'h3'
import { z } from 'zod'
import { agentError, isAgentError, type AgentError } from '../errors.ts'
import { listApprovals, resolveApproval } from '../agent/approvals.ts'
import { sameIdentity } from '../agent/identity.ts'
import { hostWorkspace, loadApproval } from '../agent/store.ts'
import { runAgent } from '../agent/run.ts'
import { messageText, readThread } from '../agent/threads.ts'
import type { AgentDefinition, AgentRunEvent } from '../agent/types.ts'
import { exportScope, listStores, openStore, pageRecords, recordDetail, requireScopeLogLines, searchRecords, verifyStoreLog } from './inspector.ts'
import { publicErrorShape, publicEvent, type RoutesMode } from './public-error.ts'
import { runResponse } from './stream.ts'
import { actionAgent, isActionApproval } from './studio-actions.ts'
import { journalRun } from './studio-journal.ts'
import { highlightRanges, registerStudioRoutes, STUDIO_IMPORT_MAX_BYTES } from './studio-routes.ts'
import type { AgentIdentity, AgentRoutesOptions } from './types.ts'

/** Default prefix of the routes. */
export const DEFAULT_AGENTS_PREFIX = '/__agents'

/** Longest user message a run accepts (characters). */
export const MAX_RUN_INPUT = 20_000

/**
 * Default most bytes of a request body (256 KiB): room for a {@link MAX_RUN_INPUT}-character
 * message of 4-byte characters as JSON, and nothing near what would strain the server's memory.
 */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024

const runBodySchema = z.strictObject({
  input: z.string().min(1).max(MAX_RUN_INPUT),
  threadId: z.string().min(1).max(256).optional(),
})

const decisionBodySchema = z.strictObject({
  approved: z.boolean(),
  reason: z.string().max(2000).optional(),
})

const approvalsQuerySchema = z.strictObject({
  status: z.enum(['pending', 'approved', 'denied', 'all']).default('pending'),
  threadId: z.string().min(1).max(256).optional(),
})

const pageQuerySchema = z.strictObject({
  status: z.enum(['active', 'all', 'superseded', 'deleted']).default('active'),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(500).default(50),
})

const searchQuerySchema = z.strictObject({
  q: z.string().trim().min(1).max(1000),
  limit: z.coerce.number().int().min(1).max(100).default(10),
})

const identitySchema = z.looseObject({ id: z.string().min(1).max(256), tenant: z.string().min(1).max(256).optional() })

/** HTTP status of an error code. */
export function statusOf(code: string): number {
  if (code === 'UNAUTHENTICATED' || code.startsWith('AUTH_') || code === 'DEV_USER_UNKNOWN') return 401
  if (code.endsWith('_NOT_FOUND') || code === 'MEMORY_STORE_UNKNOWN' || code === 'MEMORY_NOT_CONFIGURED') return 404
  if (code === 'MEMORY_EXPORT_DISABLED') return 403
  if (code === 'APPROVAL_ALREADY_RESOLVED' || code === 'APPROVAL_TAMPERED' || code === 'APPROVAL_SUPERSEDED' || code === 'MEMORY_LOG_UNAVAILABLE' || code === 'MEMORY_SCOPE_OFF') return 409
  if (code === 'REQUEST_TOO_LARGE') return 413
  if (code === 'WORKSPACE_CORRUPT_JSON' || code === 'WORKSPACE_LOCKED') return 503
  // Faults of the server's setup (an agent module or loader, createAgentHandler's options), not of the request.
  if (code === 'INTERNAL_ERROR' || code === 'AGENT_LOAD_FAILED' || code === 'AGENT_INVALID_MODULE' || code === 'AGENT_NAME_INVALID' || code === 'SERVER_OPTIONS_INVALID') return 500
  if (code === 'STUDIO_NOT_BUILT') return 503
  return 400
}

/** The JSON error answer for anything thrown by a route (`mode`: see public-error.ts). */
export function errorResponse(error: unknown, mode: RoutesMode = 'production'): Response {
  const shape = publicErrorShape(error, mode)
  return Response.json({ error: shape }, { status: isAgentError(error) ? statusOf(shape.code) : 500 })
}

function invalid(where: string, error: z.ZodError): AgentError {
  const issues = error.issues.map(issue => `${issue.path.length ? issue.path.join('.') : where}: ${issue.message}`)
  return agentError('REQUEST_INVALID', `the request ${where} is invalid: ${issues.join('; ')}`, 'send the fields documented in docs/playground-and-server.md', { issues })
}

/**
 * Reads a JSON body of at most `limit` bytes: a larger `content-length` is refused before
 * anything is read, and a body without one (chunked) is cut off once it passes the limit, so at
 * most `limit` bytes of it are ever held in memory.
 */
async function body<T>(event: H3Event, schema: z.ZodType<T>, limit: number): Promise<T> {
  const tooLarge = () => agentError('REQUEST_TOO_LARGE', `the request body is larger than ${limit} bytes`, `send a smaller body (user messages are at most ${MAX_RUN_INPUT} characters)`, { limit })
  const declared = Number(event.req.headers.get('content-length') ?? Number.NaN)
  if (Number.isFinite(declared) && declared > limit) throw tooLarge()
  const chunks: Uint8Array[] = []
  let size = 0
  const reader = event.req.body?.getReader()
  if (reader) {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.byteLength
      if (size > limit) {
        await reader.cancel().catch(() => {})
        throw tooLarge()
      }
      chunks.push(value)
    }
  }
  const text = Buffer.concat(chunks).toString('utf8')
  let value: unknown
  try {
    value = text.trim() === '' ? {} : JSON.parse(text)
  } catch {
    throw agentError('REQUEST_INVALID', 'the request body is not valid JSON', 'send a JSON object with content-type application/json')
  }
  const parsed = schema.safeParse(value ?? {})
  if (!parsed.success) throw invalid('body', parsed.error)
  return parsed.data
}

function query<T>(event: H3Event, schema: z.ZodType<T>): T {
  const parsed = schema.safeParse(getQuery(event))
  if (!parsed.success) throw invalid('query', parsed.error)
  return parsed.data
}

function param(event: H3Event, name: string): string {
  return decodeURIComponent(getRouterParam(event, name) ?? '')
}

/**
 * Answers a decision's run once its outcome is known: an error before anything was decided
 * (unknown, already decided, tampered) becomes the JSON error answer with its HTTP status (so the
 * loser of two parallel decisions gets 409 `APPROVAL_ALREADY_RESOLVED`); otherwise the run's
 * events stream, the ones already read first.
 */
async function decisionResponse(run: ReturnType<typeof resolveApproval>, accept: string | null, mode: RoutesMode): Promise<Response> {
  const iterator = run[Symbol.asyncIterator]()
  const seen: AgentRunEvent[] = []
  for (;;) {
    const step = await iterator.next()
    if (step.done) break
    seen.push(step.value)
    if (step.value.type === 'error' && !seen.some(event => event.type === 'approval-decision')) {
      const shape = publicEvent(step.value, mode).error
      return Response.json({ error: shape }, { status: statusOf(shape.code) })
    }
    if (step.value.type !== 'start') break
  }
  return runResponse(run, accept, 200, { events: seen, iterator }, mode)
}

/**
 * Builds the h3 app of the agent routes under `prefix` (default `/__agents`):
 *
 * | Method | Path | Answer |
 * | --- | --- | --- |
 * | GET | `/me` | `{ identity }` |
 * | GET | `/users` | dev only: `{ users }` for the playground's user picker |
 * | GET | `/agents` | `{ agents: [{ name, driver, capabilities, error? }] }` (an agent that fails to load: `driver: 'unavailable'` and its `error`) |
 * | POST | `/agents/:agent/runs` | body `{ input, threadId? }`: the run's events as NDJSON (or SSE with `accept: text/event-stream`) |
 * | GET | `/agents/:agent/approvals` | `?status=pending\|approved\|denied\|all&threadId=`: `{ approvals }` of this identity |
 * | POST | `/agents/:agent/approvals/:id` | body `{ approved, reason? }`: the continued run's events |
 * | GET | `/agents/:agent/stores` | `{ stores: [{ name, kind, scope, writeMode, hasLog }] }` |
 * | GET | `/agents/:agent/stores/:store/records` | `?status=active\|all\|superseded\|deleted&offset&limit`: a page, newest first |
 * | GET | `/agents/:agent/stores/:store/records/:id` | `{ record, events, supersedes, supersededBy? }` |
 * | GET | `/agents/:agent/stores/:store/search` | `?q=&limit=`: `{ hits: [{ record, score }] }` |
 * | GET | `/agents/:agent/stores/:store/log` | `{ lines }`: this scope's raw JSONL lines with digests |
 * | POST | `/agents/:agent/stores/:store/verify` | `verifyLog` of the store's whole log |
 * | GET | `/agents/:agent/stores/:store/export` | the scope as JSON (attachment) |
 *
 * Errors: 401 `UNAUTHENTICATED` (no identity) or the hook's own `AUTH_*` code; 404
 * `AGENT_NOT_FOUND`, `APPROVAL_NOT_FOUND`, `MEMORY_RECORD_NOT_FOUND`, `MEMORY_STORE_UNKNOWN`,
 * `ROUTE_NOT_FOUND`; 400 `REQUEST_INVALID`; 409 `APPROVAL_ALREADY_RESOLVED` (also the loser of
 * two parallel decisions), `APPROVAL_TAMPERED`, `MEMORY_SCOPE_OFF`, `MEMORY_LOG_UNAVAILABLE`; 413
 * `REQUEST_TOO_LARGE` (a body over `maxBodyBytes`, default {@link DEFAULT_MAX_BODY_BYTES}); 503
 * `WORKSPACE_CORRUPT_JSON` for an approval file that is not JSON (only that request). Another
 * identity's approval or record (same user id, other tenant included) answers exactly as a
 * missing one.
 */
export function createAgentRoutes(options: AgentRoutesOptions): H3 {
  if (typeof options?.identify !== 'function') {
    throw agentError('SERVER_IDENTIFY_REQUIRED', 'the agent routes were created without an identify(event) hook', 'pass identify, for example jwtIdentity({ secret }) from vite-agent-memory/server')
  }
  const prefix = (options.prefix ?? DEFAULT_AGENTS_PREFIX).replace(/\/+$/, '')
  const mode = options.mode ?? 'production'
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const app = new H3()

  const identify = async (event: H3Event): Promise<AgentIdentity> => {
    const identity = await options.identify(event)
    if (identity === undefined || identity === null) {
      throw agentError('UNAUTHENTICATED', 'the request carries no verified identity', 'sign in, or send the credentials the server expects (for example `authorization: Bearer <jwt>`)')
    }
    const parsed = identitySchema.safeParse(identity)
    if (!parsed.success) throw agentError('UNAUTHENTICATED', 'the identify hook returned an identity without a valid `id`', 'return { id, tenant?, ... } from identify(event), or undefined when the request is not signed in')
    return identity
  }

  const agentOf = async (event: H3Event): Promise<AgentDefinition> => {
    const name = param(event, 'agent')
    const agent = await options.agents.load(name)
    if (!agent) throw agentError('AGENT_NOT_FOUND', `there is no agent named "${name}"`, 'use a name from GET /agents', { agent: name })
    return agent
  }

  type Handler = (event: H3Event, identity: AgentIdentity) => unknown
  const route = (handler: Handler) => async (event: H3Event) => {
    try {
      const identity = await identify(event)
      return await handler(event, identity)
    } catch (error) {
      return errorResponse(error, mode)
    }
  }

  app.get(`${prefix}/me`, route((_event, identity) => ({ identity })))
  if (options.mode === 'dev') app.get(`${prefix}/users`, route(() => ({ users: options.devUsers ?? [] })))

  // An agent whose module fails to load is listed with its error: it must not hide the others.
  app.get(`${prefix}/agents`, route(async () => {
    const agents = []
    for (const name of await options.agents.list()) {
      let agent: AgentDefinition | undefined
      try {
        agent = await options.agents.load(name)
      } catch (error) {
        agents.push({ name, driver: 'unavailable', capabilities: [], error: publicErrorShape(error, mode) })
        continue
      }
      if (agent) agents.push({ name, driver: 'model' in agent.driver ? 'model' : 'provider' in agent.driver ? 'provider' : 'custom-run', capabilities: agent.capabilities.map(capability => capability.id) })
    }
    return { agents }
  }))

  app.post(`${prefix}/agents/:agent/runs`, route(async (event, identity) => {
    const agent = await agentOf(event)
    const input = await body(event, runBodySchema, maxBodyBytes)
    const run = runAgent(agent, { input: input.input, ...(input.threadId ? { threadId: input.threadId } : {}), user: identity })
    // With the studio on, the run is journalled (steps, timings, decisions) before its first event is sent.
    const served = options.studio ? await journalRun(agent, run, { threadId: run.threadId, identity, kind: 'message', input: input.input }) : run
    return runResponse(served, event.req.headers.get('accept'), 200, undefined, mode)
  }))

  app.get(`${prefix}/agents/:agent/threads/:thread`, route(async (event, identity) => {
    const agent = await agentOf(event)
    const threadId = param(event, 'thread')
    // Another user's thread answers exactly like an unknown one.
    const thread = await readThread(agent, threadId, { user: identity })
    if (!thread) throw agentError('THREAD_NOT_FOUND', `there is no thread "${threadId}" of yours for this agent`, 'start a new thread by sending a message without threadId', { threadId })
    const messages = thread.messages
      .filter(message => message.role === 'user' || message.role === 'assistant')
      .map(message => ({ role: message.role, text: messageText(message) }))
      .filter(message => message.text !== '')
    return { threadId: thread.threadId, messages, pendingApprovalIds: thread.pendingApprovalIds }
  }))

  app.get(`${prefix}/agents/:agent/approvals`, route(async (event, identity) => {
    const agent = await agentOf(event)
    const filter = query(event, approvalsQuerySchema)
    // Read through the identity's (or the thread's) index: never every approval file.
    const approvals = await listApprovals(agent, { user: identity, ...(filter.status === 'all' ? {} : { status: filter.status }), ...(filter.threadId ? { threadId: filter.threadId } : {}) })
    return { approvals }
  }))

  app.post(`${prefix}/agents/:agent/approvals/:id`, route(async (event, identity) => {
    const agent = await agentOf(event)
    const id = param(event, 'id')
    const decision = await body(event, decisionBodySchema, maxBodyBytes)
    // Read by id only. Bound to the identity (tenant and user id) that created it: another
    // identity's approval answers exactly as an unknown id.
    const approval = await loadApproval(hostWorkspace(agent), agent.name, id)
    if (!approval || !sameIdentity(approval.user, identity)) {
      throw agentError('APPROVAL_NOT_FOUND', `there is no approval "${id}" for this agent`, 'use an id from GET /agents/:agent/approvals', { approvalId: id })
    }
    if (approval.status !== 'pending') {
      throw agentError('APPROVAL_ALREADY_RESOLVED', `approval "${id}" was already ${approval.status}; nothing was changed or run`, 'each approval applies once; ask the agent again for a new request', { approvalId: id, status: approval.status })
    }
    // A studio action's approval continues with the action driver, not the agent's own driver.
    const run = resolveApproval(isActionApproval(approval) ? actionAgent(agent) : agent, id, {
      approved: decision.approved,
      ...(decision.reason ? { reason: decision.reason } : {}),
      approver: identity.id,
      threadId: approval.threadId,
      user: identity,
    })
    const served = options.studio ? await journalRun(agent, run, { threadId: approval.threadId, identity, kind: 'decision', approvalId: id, ...(isActionApproval(approval) ? { origin: 'studio' as const } : {}) }) : run
    return decisionResponse(served, event.req.headers.get('accept'), mode)
  }))

  app.get(`${prefix}/agents/:agent/stores`, route(async (event, identity) => ({ stores: await listStores(await agentOf(event), identity) })))

  const opened = async (event: H3Event, identity: AgentIdentity) => {
    const agent = await agentOf(event)
    return { agent, store: await openStore(agent, identity, param(event, 'store')) }
  }

  app.get(`${prefix}/agents/:agent/stores/:store/records`, route(async (event, identity) => {
    const { store } = await opened(event, identity)
    return pageRecords(store, query(event, pageQuerySchema))
  }))

  app.get(`${prefix}/agents/:agent/stores/:store/records/:id`, route(async (event, identity) => {
    const { agent, store } = await opened(event, identity)
    return recordDetail(agent, store, param(event, 'id'))
  }))

  app.get(`${prefix}/agents/:agent/stores/:store/search`, route(async (event, identity) => {
    const { store } = await opened(event, identity)
    const search = query(event, searchQuerySchema)
    const hits = await searchRecords(store, search.q, search.limit)
    // `highlights`: [start, end) ranges of the content's words that match a query term.
    return { query: search.q, hits: hits.map(hit => ({ ...hit, highlights: highlightRanges(hit.record.content, search.q) })) }
  }))

  app.get(`${prefix}/agents/:agent/stores/:store/log`, route(async (event, identity) => {
    const { agent, store } = await opened(event, identity)
    return { store: store.store, scope: store.target.scope, lines: await requireScopeLogLines(agent, store) }
  }))

  app.post(`${prefix}/agents/:agent/stores/:store/verify`, route(async (event, identity) => {
    const { agent, store } = await opened(event, identity)
    return verifyStoreLog(agent, store)
  }))

  app.get(`${prefix}/agents/:agent/stores/:store/export`, route(async (event, identity) => {
    const { agent, store } = await opened(event, identity)
    const exported = await exportScope(agent, store)
    return new Response(JSON.stringify(exported, null, 2), {
      headers: { 'content-type': 'application/json; charset=utf-8', 'content-disposition': `attachment; filename="${exportFileName(agent.name, store.store, identity.tenant ? `${identity.tenant}.${identity.id}` : identity.id)}"` },
    })
  }))

  if (options.studio) {
    registerStudioRoutes({
      app, prefix, mode: options.mode ?? 'production', agents: options.agents, devUsers: options.devUsers ?? [],
      ...(typeof options.studio === 'object' && options.studio.dir ? { assetsDir: options.studio.dir } : {}),
      route, agentOf, opened, query, body: (event, schema) => body(event, schema, maxBodyBytes), importBody: (event, schema) => body(event, schema, Math.max(maxBodyBytes, STUDIO_IMPORT_MAX_BYTES)), param, recordDetail, errorResponse: (error: unknown) => errorResponse(error, mode),
    })
  }

  // Unknown paths under the prefix still ask for an identity first, so nothing is learned without one.
  app.all(`${prefix}/**`, route(event => {
    throw agentError('ROUTE_NOT_FOUND', `no route ${event.req.method} ${new URL(event.req.url).pathname}`, 'see the route table in docs/playground-and-server.md')
  }))
  return app
}

/** `<agent>-<store>-<user>-export.json`, with anything outside `[A-Za-z0-9_.-]` replaced, so exports of two users never share a name. */
function exportFileName(agent: string, store: string, user: string): string {
  return `${[agent, store, user].map(part => part.replace(/[^\w.-]+/g, '_')).join('-')}-export.json`
}

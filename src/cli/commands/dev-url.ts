/**
 * `agent dev --url <dev server>`: the terminal chat of `agent dev`, driving a running dev server
 * (the Vite plugin's routes, or the production handler with `--token`) instead of loading the
 * agent in-process. It prints the same lines as the in-process chat.
 */
import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { agentError, toErrorShape, type AgentErrorShape } from '../../errors.ts'
import type { AgentRunEvent, ApprovalRequest } from '../../agent/types.ts'
import { DEFAULT_JSON_LIMIT, formatApprovalPrompt, formatError, formatEvent, parseApprovalAnswer } from '../format.ts'

/** Options of {@link runRemoteChat}. */
export interface RemoteChatOptions {
  /** Base URL of the routes, for example `http://localhost:5173/__agents` (a bare origin gets `/__agents`). */
  url: string
  agent: string
  /** Dev user (sent as `x-agent-user`); ignored by servers that verify a token. */
  user: string
  /** Bearer token for the production handler. */
  token?: string
  threadId?: string
  input: Readable
  output: Writable
  interactive: boolean
  jsonLimit?: number
}

/** The routes' base URL: `url` itself when it has a path, else `<origin>/__agents`. */
export function routesBase(url: string): string {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw agentError('CLI_URL_INVALID', `--url ${JSON.stringify(url)} is not a URL`, 'pass the dev server address printed by `npm run dev`, for example --url http://localhost:5173')
  }
  const path = parsed.pathname.replace(/\/+$/, '')
  return `${parsed.origin}${path === '' ? '/__agents' : path}`
}

function isErrorShape(value: unknown): value is AgentErrorShape {
  return typeof value === 'object' && value !== null && typeof (value as { code?: unknown }).code === 'string' && typeof (value as { message?: unknown }).message === 'string'
}

/** The error of an answer without the routes' error shape: the address serves something, but not the agent routes. */
function noAgentRoutes(url: string, base: string, status: number): AgentErrorShape {
  return toErrorShape(agentError('CLI_SERVER_NO_AGENT_ROUTES', `${url} answered HTTP ${status} without an agent error: ${base} is not the base of the agent routes`, 'pass --url the dev server\'s address (its routes are under /__agents) or the full base of a production handler, prefix included, for example --url http://localhost:3000/api/agents', { url, status }))
}

/**
 * A chat with an agent served over HTTP. Each input line POSTs a run and prints its NDJSON events
 * with the same formatting as `agent dev` (text, `[tool]`, `[result]`, `[error]`,
 * `[approval]`); each approval request is asked inline and answered with a POST to the approval
 * route. `/exit` or end of input quits. HTTP errors print as `[error] CODE: ...`, never thrown.
 *
 * @returns `{ unreachable }`: true when some request could not reach the agent at all: no server
 * (`CLI_SERVER_UNREACHABLE`), no agent routes at the address (`CLI_SERVER_NO_AGENT_ROUTES`, for
 * example a production handler's URL without its prefix) or no agent of that name
 * (`AGENT_NOT_FOUND`), so that a script can tell a chat that never ran (the CLI exits 1).
 */
export async function runRemoteChat(options: RemoteChatOptions): Promise<{ unreachable: boolean }> {
  const base = routesBase(options.url)
  const limit = options.jsonLimit ?? DEFAULT_JSON_LIMIT
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/x-ndjson', 'x-agent-user': options.user }
  if (options.token) headers.authorization = `Bearer ${options.token}`
  const lines = createInterface({ input: options.input, crlfDelay: Infinity, terminal: false })[Symbol.asyncIterator]()
  const next = async () => { const step = await lines.next(); return step.done ? undefined : step.value as string }
  let threadId = options.threadId
  let unreachable = false
  let atLineStart = true
  const write = (text: string) => { if (text) { options.output.write(text); atLineStart = text.endsWith('\n') } }
  const line = (text: string) => write(`${atLineStart ? '' : '\n'}${text}\n`)
  const agentPath = `${base}/agents/${encodeURIComponent(options.agent)}`

  /** POSTs, prints the streamed events, and returns the approvals requested. */
  const stream = async (url: string, body: unknown): Promise<ApprovalRequest[]> => {
    const approvals: ApprovalRequest[] = []
    let response: Response
    try {
      response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) })
    } catch (error) {
      unreachable = true
      line(`[error] ${formatError(agentError('CLI_SERVER_UNREACHABLE', `cannot reach ${url}: ${error instanceof Error ? error.message : String(error)}`, 'start the dev server (`npm run dev`) and pass its address to --url'))}`)
      return approvals
    }
    if (!response.ok || !response.body) {
      const data = await response.json().catch(() => ({})) as { error?: AgentErrorShape }
      const error = isErrorShape(data.error) ? data.error : undefined
      // No agent there (no agent routes at this address, or none of that name): the chat cannot run.
      if (!error || error.code === 'AGENT_NOT_FOUND') unreachable = true
      line(`[error] ${formatError(error ?? noAgentRoutes(url, base, response.status))}`)
      return approvals
    }
    const decoder = new TextDecoder()
    let buffered = ''
    const reader = response.body.getReader()
    for (;;) {
      const { done, value: chunk } = await reader.read()
      if (done) break
      buffered += decoder.decode(chunk, { stream: true })
      let newline: number
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const text = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        if (!text.trim()) continue
        const event = JSON.parse(text) as AgentRunEvent
        if (event.type === 'start' && event.threadId) threadId = event.threadId
        if (event.type === 'approval-request') approvals.push(event.approval)
        if (event.type === 'text-delta') write(event.text)
        else {
          const formatted = formatEvent(event, limit)
          if (formatted !== undefined) line(formatted)
        }
      }
    }
    if (!atLineStart) write('\n')
    return approvals
  }

  const ask = async (prompt: string) => {
    write(`${atLineStart ? '' : '\n'}${prompt}`)
    const answer = await next()
    if (!options.interactive) write(`${answer ?? ''}\n`)
    else atLineStart = true
    return answer
  }

  const settle = async (pending: ApprovalRequest[]): Promise<boolean> => {
    while (pending.length > 0) {
      const approval = pending.shift()!
      const answer = await ask(formatApprovalPrompt(approval, limit))
      if (answer === undefined) {
        line(`approval ${approval.id} left pending (end of input)`)
        return false
      }
      const decision = parseApprovalAnswer(answer)
      pending.push(...await stream(`${agentPath}/approvals/${encodeURIComponent(approval.id)}`, { approved: decision.approved, ...(decision.reason ? { reason: decision.reason } : {}) }))
    }
    return true
  }

  for (;;) {
    if (options.interactive) write('> ')
    const text = await next()
    if (text === undefined) break
    if (!options.interactive) write(`> ${text}\n`)
    else atLineStart = true
    const command = text.trim()
    if (command === '') continue
    if (command === '/exit' || command === '/quit') break
    const approvals = await stream(`${agentPath}/runs`, { input: text, ...(threadId ? { threadId } : {}) })
    if (!(await settle(approvals))) break
  }
  return { unreachable }
}


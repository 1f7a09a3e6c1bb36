/** A small client for the agent and studio routes (`/__agents` in dev). Plain `fetch`. */

export interface ApiError { code: string; message: string; why: string; fix: string; details?: Record<string, unknown> }
export interface RunEvent { type: string; [field: string]: unknown }
export interface ApprovalView {
  id: string; toolName: string; toolCallId: string; input: unknown; reason: string; threadId: string; runId: string; status: 'pending' | 'approved' | 'denied'; createdAt: string
  decision?: { approved: boolean; reason?: string; approver?: string; decidedAt: string }
}
export interface RecordView {
  id: string; store: string; kind: string; content: string; title?: string; status: string; tags: string[]; pinned: boolean; createdAt: string; updatedAt: string; version: number
  provenance: Record<string, unknown>; audit: Record<string, unknown>; scope: Record<string, string>; supersedes: string[]; supersededBy?: string; deleteReason?: string
}
export interface LogLineView { line: number; text: string; seq: number; type: string; recordId: string; version: number; at: string; digest: string; prev: string | null }
export interface StoreView { name: string; kind: string; scope: Record<string, string> | null; writeMode: string; hasLog: boolean }
export interface JournalEvent extends RunEvent { at: number }
export interface JournalRunView { id: string; runId: string; kind: 'message' | 'decision' | 'action'; input?: string; approvalId?: string; startedAt: string; durationMs?: number; status: string; events: JournalEvent[] }
export interface ThreadSummaryView { threadId: string; title: string; createdAt: string; updatedAt: string; runs: number; status: string }
export interface ThreadJournalView { threadId: string; title: string; runs: JournalRunView[]; messages: { role: 'user' | 'assistant'; text: string }[]; approvals: ApprovalView[] }
export interface TablePageView { total: number; offset: number; limit: number; records: RecordView[]; kinds: string[]; tags: string[]; scope: Record<string, string> }
export interface SearchHitView { record: RecordView; score: number; snippet?: string; highlights: [number, number][] }
export interface VerifyView { ok: boolean; lines: number; key: string; firstBad?: { line: number; reason: string }; torn?: { line: number; bytes: number } }
export interface ScopeView { store: string; scope: Record<string, string>; lines: number }
export interface LinePageView { total: number; offset: number; limit: number; lines: LogLineView[] }
export interface ImportView { added: number; skipped: number; duplicates: number; renamed: number; expired: number }

/** Longest message the run route accepts (characters); the server checks it too. */
export const MAX_MESSAGE = 20_000

export class ApiFailure extends Error {
  constructor(readonly error: ApiError, readonly status: number) {
    super(error.message)
  }
}

/** The message of any failure, for a status line. */
export function failureText(error: unknown): string {
  return error instanceof ApiFailure ? `${error.error.message}${error.error.fix ? ` (${error.error.fix})` : ''}` : error instanceof Error ? error.message : String(error)
}

async function failure(response: Response): Promise<ApiFailure> {
  const data = await response.json().catch(() => ({})) as { error?: ApiError }
  return new ApiFailure(data.error ?? { code: 'HTTP_ERROR', message: `HTTP ${response.status}`, why: '', fix: '' }, response.status)
}

export function createApi(base: string, user: () => string) {
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({ ...(user() ? { 'x-agent-user': user() } : {}), ...extra })
  async function json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const response = await fetch(`${base}${path}`, { ...init, headers: headers(init.body ? { 'content-type': 'application/json' } : {}) })
    if (!response.ok) throw await failure(response)
    return await response.json() as T
  }
  /**
   * POSTs and calls `onEvent` for each NDJSON event of the streamed run. Rejects with the
   * route's error before any event when the request is refused (nothing was run).
   */
  async function stream(path: string, body: unknown, onEvent: (event: RunEvent) => void): Promise<void> {
    const response = await fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify(body), headers: headers({ 'content-type': 'application/json', accept: 'application/x-ndjson' }) })
    if (!response.ok || !response.body) throw await failure(response)
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader()
    let buffered = ''
    for (;;) {
      const { done, value } = await reader.read()
      if (value) buffered += value
      let newline: number
      while ((newline = buffered.indexOf('\n')) >= 0) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        if (line.trim()) onEvent(JSON.parse(line) as RunEvent)
      }
      if (done) break
    }
  }
  const agentPath = (agent: string) => `/agents/${encodeURIComponent(agent)}`
  const store = (agent: string, name: string) => `${agentPath(agent)}/stores/${encodeURIComponent(name)}`
  const search = (params: Record<string, string | number | undefined>) => {
    const entries = Object.entries(params).filter((entry): entry is [string, string | number] => entry[1] !== undefined && entry[1] !== '')
    return entries.length ? `?${new URLSearchParams(entries.map(([key, value]) => [key, String(value)])).toString()}` : ''
  }
  return {
    users: () => json<{ users: string[] }>('/studio-users'),
    agents: () => json<{ agents: { name: string; driver: string; capabilities: string[] }[] }>('/agents'),
    run: (agent: string, input: string, threadId: string | undefined, onEvent: (event: RunEvent) => void) =>
      stream(`${agentPath(agent)}/runs`, { input, ...(threadId ? { threadId } : {}) }, onEvent),
    threads: (agent: string) => json<{ threads: ThreadSummaryView[] }>(`${agentPath(agent)}/threads`),
    journal: (agent: string, threadId: string) => json<ThreadJournalView>(`${agentPath(agent)}/threads/${encodeURIComponent(threadId)}/journal`),
    decide: (agent: string, id: string, approved: boolean, reason: string, onEvent: (event: RunEvent) => void) =>
      stream(`${agentPath(agent)}/approvals/${encodeURIComponent(id)}`, { approved, ...(reason ? { reason } : {}) }, onEvent),
    stores: (agent: string) => json<{ stores: StoreView[] }>(`${agentPath(agent)}/stores`),
    scopes: (agent: string, name: string) => json<{ current: Record<string, string>; scopes: ScopeView[] }>(`${store(agent, name)}/scopes`),
    table: (agent: string, name: string, filter: Record<string, string | number | undefined>) => json<TablePageView>(`${store(agent, name)}/table${search(filter)}`),
    search: (agent: string, name: string, q: string) => json<{ hits: SearchHitView[] }>(`${store(agent, name)}/search${search({ q, limit: 20 })}`),
    record: (agent: string, name: string, id: string) => json<{ record: RecordView; events: LogLineView[] }>(`${store(agent, name)}/records/${encodeURIComponent(id)}`),
    versions: (agent: string, name: string, id: string) => json<{ versions: RecordView[]; events: LogLineView[] }>(`${store(agent, name)}/records/${encodeURIComponent(id)}/versions`),
    action: (agent: string, name: string, id: string, action: Record<string, unknown>, onEvent: (event: RunEvent) => void) =>
      stream(`${store(agent, name)}/records/${encodeURIComponent(id)}/actions`, action, onEvent),
    lines: (agent: string, name: string, offset: number | undefined, limit: number) => json<LinePageView>(`${store(agent, name)}/lines${search({ offset, limit })}`),
    verify: (agent: string, name: string) => json<VerifyView>(`${store(agent, name)}/verify`, { method: 'POST' }),
    importScope: (agent: string, name: string, data: unknown) => json<ImportView>(`${store(agent, name)}/import`, { method: 'POST', body: JSON.stringify(data) }),
    exportUrl: (agent: string, name: string) => `${base}${store(agent, name)}/export?user=${encodeURIComponent(user())}`,
  }
}

export type Api = ReturnType<typeof createApi>

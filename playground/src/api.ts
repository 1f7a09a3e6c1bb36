/** A small client for the agent routes (`/__agents` in dev). Plain `fetch`, no framework. */

export interface ApiError { code: string; message: string; why: string; fix: string; details?: Record<string, unknown> }
export interface RunEvent { type: string; [field: string]: unknown }
export interface ApprovalView { id: string; toolName: string; input: unknown; reason: string; threadId: string; runId: string; status: string; createdAt: string }
export interface RecordView {
  id: string; kind: string; content: string; status: string; tags: string[]; createdAt: string; updatedAt: string; version: number
  provenance: Record<string, unknown>; audit: Record<string, unknown>; scope: Record<string, string>; supersedes: string[]; supersededBy?: string; deleteReason?: string
}
export interface LogLineView { line: number; text: string; seq: number; type: string; recordId: string; version: number; at: string; digest: string; prev: string | null }
export interface StoreView { name: string; kind: string; scope: Record<string, string> | null; writeMode: string; hasLog: boolean }

export class ApiFailure extends Error {
  constructor(readonly error: ApiError, readonly status: number) {
    super(error.message)
  }
}

export function createApi(base: string, user: () => string) {
  const headers = (extra: Record<string, string> = {}): Record<string, string> => ({ ...(user() ? { 'x-agent-user': user() } : {}), ...extra })
  async function json<T>(path: string, init: RequestInit = {}): Promise<T> {
    const response = await fetch(`${base}${path}`, { ...init, headers: headers(init.body ? { 'content-type': 'application/json' } : {}) })
    const data = await response.json() as T & { error?: ApiError }
    if (!response.ok) throw new ApiFailure(data.error ?? { code: 'HTTP_ERROR', message: `HTTP ${response.status}`, why: '', fix: '' }, response.status)
    return data
  }
  /** POSTs and calls `onEvent` for each NDJSON event of the streamed run. */
  async function stream(path: string, body: unknown, onEvent: (event: RunEvent) => void): Promise<void> {
    const response = await fetch(`${base}${path}`, { method: 'POST', body: JSON.stringify(body), headers: headers({ 'content-type': 'application/json', accept: 'application/x-ndjson' }) })
    if (!response.ok || !response.body) {
      const data = await response.json().catch(() => ({})) as { error?: ApiError }
      throw new ApiFailure(data.error ?? { code: 'HTTP_ERROR', message: `HTTP ${response.status}`, why: '', fix: '' }, response.status)
    }
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
  const store = (agent: string, name: string) => `/agents/${encodeURIComponent(agent)}/stores/${encodeURIComponent(name)}`
  return {
    users: () => json<{ users: string[] }>('/users'),
    agents: () => json<{ agents: { name: string; driver: string; capabilities: string[] }[] }>('/agents'),
    run: (agent: string, input: string, threadId: string | undefined, onEvent: (event: RunEvent) => void) =>
      stream(`/agents/${encodeURIComponent(agent)}/runs`, { input, ...(threadId ? { threadId } : {}) }, onEvent),
    thread: (agent: string, threadId: string) => json<{ threadId: string; messages: { role: 'user' | 'assistant'; text: string }[] }>(`/agents/${encodeURIComponent(agent)}/threads/${encodeURIComponent(threadId)}`),
    approvals: (agent: string) => json<{ approvals: ApprovalView[] }>(`/agents/${encodeURIComponent(agent)}/approvals?status=pending`),
    decide: (agent: string, id: string, approved: boolean, reason: string, onEvent: (event: RunEvent) => void) =>
      stream(`/agents/${encodeURIComponent(agent)}/approvals/${encodeURIComponent(id)}`, { approved, ...(reason ? { reason } : {}) }, onEvent),
    stores: (agent: string) => json<{ stores: StoreView[] }>(`/agents/${encodeURIComponent(agent)}/stores`),
    records: (agent: string, name: string, status: string) => json<{ total: number; records: RecordView[] }>(`${store(agent, name)}/records?status=${status}&limit=200`),
    search: (agent: string, name: string, q: string) => json<{ hits: { record: RecordView; score: number }[] }>(`${store(agent, name)}/search?q=${encodeURIComponent(q)}&limit=20`),
    record: (agent: string, name: string, id: string) => json<{ record: RecordView; events: LogLineView[]; supersedes: RecordView[]; supersededBy?: RecordView }>(`${store(agent, name)}/records/${encodeURIComponent(id)}`),
    log: (agent: string, name: string) => json<{ lines: LogLineView[] }>(`${store(agent, name)}/log`),
    verify: (agent: string, name: string) => json<{ ok: boolean; lines: number; key: string; firstBad?: { line: number; reason: string }; torn?: { line: number; bytes: number } }>(`${store(agent, name)}/verify`, { method: 'POST' }),
    exportUrl: (agent: string, name: string) => `${base}${store(agent, name)}/export?user=${encodeURIComponent(user())}`,
  }
}

export type Api = ReturnType<typeof createApi>

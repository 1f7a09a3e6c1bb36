/** The chat view: the user's threads, the selected thread drawn from its journal, live runs, approvals and the composer. */
import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiFailure, failureText, type Api, type ApprovalView, type JournalRunView, type ThreadSummaryView } from '../api.ts'
import { applyEvent, decisionsOf, html, RunView, when } from './ui.ts'

export const threadStorageKey = (agent: string, user: string) => `vam.thread.${agent}.${user}`

export function Chat(props: { api: Api; agent: string; user: string; onWrite: () => void }) {
  const { api, agent, user } = props
  const storageKey = threadStorageKey(agent, user)
  const [threadId, setThreadId] = useState<string | undefined>(() => localStorage.getItem(storageKey) ?? undefined)
  const [threads, setThreads] = useState<ThreadSummaryView[]>([])
  const [runs, setRuns] = useState<JournalRunView[]>([])
  const [messages, setMessages] = useState<{ role: string; text: string }[]>([])
  const [approvals, setApprovals] = useState<ApprovalView[]>([])
  const [loadError, setLoadError] = useState<string | undefined>()
  const [status, setStatus] = useState<{ text: string; error: boolean }>({ text: '', error: false })
  const [draft, setDraft] = useState('')
  const [sending, setSending] = useState(false)
  const streaming = useRef(0)
  const transcript = useRef<HTMLOListElement>(null)

  const refreshThreads = () => api.threads(agent).then(answer => setThreads(answer.threads), error => setStatus({ text: failureText(error), error: true }))

  // Draws the thread again from its journal. A failure is shown with a retry, never dropped.
  const load = async (id: string | undefined) => {
    setLoadError(undefined)
    if (!id) {
      setRuns([]); setMessages([]); setApprovals([])
      return
    }
    try {
      const journal = await api.journal(agent, id)
      setRuns(journal.runs)
      setMessages(journal.runs.length ? [] : journal.messages)
      setApprovals(journal.approvals)
    } catch (error) {
      if (error instanceof ApiFailure && error.error.code === 'THREAD_NOT_FOUND') {
        localStorage.removeItem(storageKey)
        setThreadId(undefined)
        setLoadError(`Thread ${id} was not found; a new thread was started.`)
        return
      }
      setLoadError(`Loading thread ${id} failed: ${failureText(error)}`)
    }
  }

  // Set when a first message starts a thread: its runs are already drawn from the stream, so the switch does not reload them.
  const quiet = useRef<string | undefined>()
  useEffect(() => {
    if (quiet.current !== undefined && quiet.current === threadId) quiet.current = undefined
    else void load(threadId)
    void refreshThreads()
  }, [agent, user, threadId])

  // A run that another tab (or the page before a reload) started is shown as it goes on.
  useEffect(() => {
    if (streaming.current > 0 || !threadId || !runs.some(run => run.status === 'running')) return
    const timer = setTimeout(() => void load(threadId), 1000)
    return () => clearTimeout(timer)
  }, [runs, threadId])

  useEffect(() => {
    const list = transcript.current
    if (list) list.scrollTop = list.scrollHeight
  }, [runs, messages])

  const select = (id: string | undefined) => {
    if (id) localStorage.setItem(storageKey, id)
    else localStorage.removeItem(storageKey)
    setStatus({ text: '', error: false })
    setThreadId(id)
  }

  /** Streams a run into this thread's runs; resolves `true` once the server accepted it. */
  const stream = async (start: (onEvent: (event: { type: string; [key: string]: unknown }) => void) => Promise<void>, entry: { kind: JournalRunView['kind']; input?: string; approvalId?: string }, onAccepted?: (threadId: string) => void) => {
    const started = Date.now()
    let accepted = false
    streaming.current += 1
    try {
      await start((event) => {
        if (event.type === 'start' && !accepted) {
          accepted = true
          onAccepted?.(String(event.threadId))
        }
        setRuns(current => applyEvent(current, event, started, entry))
      })
    } catch (error) {
      setStatus({ text: failureText(error), error: true })
    } finally {
      streaming.current -= 1
      if (accepted) {
        void refreshThreads()
        props.onWrite()
      }
    }
    return accepted
  }

  const send = async (event: Event) => {
    event.preventDefault()
    const message = draft.trim()
    if (!message || !agent || sending) return
    setSending(true)
    setStatus({ text: '', error: false })
    // The input is cleared and the message drawn only once the server accepted the run, so a refused message stays editable.
    await stream(onEvent => api.run(agent, message, threadId, onEvent), { kind: 'message', input: message }, (id) => {
      setDraft('')
      if (id !== threadId) {
        localStorage.setItem(storageKey, id)
        quiet.current = id
        setThreadId(id)
      }
    })
    setSending(false)
  }

  const decisions = decisionsOf(runs)
  const statusOf = (approval: ApprovalView): ApprovalView['status'] => {
    const decided = decisions.get(approval.id)
    if (decided) return decided.approved ? 'approved' : 'denied'
    return approvals.find(candidate => candidate.id === approval.id)?.status ?? approval.status
  }
  const decide = async (approval: ApprovalView, approved: boolean, reason: string) => {
    await stream(onEvent => api.decide(agent, approval.id, approved, reason, onEvent), { kind: 'decision', approvalId: approval.id })
  }

  return html`<div class="chat-layout">
    <nav class="threads" aria-label="Threads">
      <button type="button" onClick=${() => select(undefined)}>New thread</button>
      <ul aria-label="Thread list">
        ${threads.map(thread => html`<li key=${thread.threadId}>
          <button type="button" class="link" aria-current=${thread.threadId === threadId ? 'true' : undefined} onClick=${() => select(thread.threadId)}>${thread.title || thread.threadId}</button>
          <span class="muted"> ${when(thread.updatedAt)} · ${thread.runs} run${thread.runs === 1 ? '' : 's'}${thread.status === 'awaiting-approval' ? ' · awaiting approval' : ''}</span>
        </li>`)}
      </ul>
    </nav>
    <section class="chat" aria-labelledby="vam-chat-title">
      <h2 id="vam-chat-title">Chat <code aria-label="Current thread">${threadId ?? 'new thread'}</code></h2>
      ${loadError ? html`<p class="error" role="alert">${loadError} ${threadId ? html`<button type="button" onClick=${() => void load(threadId)}>Retry</button>` : null}</p>` : null}
      <ol class="transcript" aria-live="polite" aria-label="Conversation" ref=${transcript}>
        ${messages.map((message, index) => html`<li class="turn earlier" key=${`m${index}`}>${message.role === 'user' ? html`<p class="user"><span class="who">${user}: </span>${message.text}</p>` : html`<p class="assistant">${message.text}</p>`}</li>`)}
        ${runs.map(run => html`<${RunView} key=${run.id} run=${run} user=${user} decisions=${decisions} statusOf=${statusOf} onDecide=${decide} />`)}
      </ol>
      <form class="composer" onSubmit=${send}>
        <label for="vam-input" class="visually-hidden">Message</label>
        <textarea id="vam-input" rows="2" autocomplete="off" placeholder="remember I prefer window seats · what seat do I prefer?" value=${draft}
          onInput=${(event: Event) => setDraft((event.target as HTMLTextAreaElement).value)}
          onKeyDown=${(event: KeyboardEvent) => { if (event.key === 'Enter' && !event.shiftKey) { event.preventDefault(); void send(event) } }}></textarea>
        <button type="submit" disabled=${sending}>Send</button>
      </form>
      <p class=${`status ${status.error ? 'error' : ''}`} role="status">${status.text}</p>
    </section>
  </div>`
}

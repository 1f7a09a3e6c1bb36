/**
 * The playground UI: a chat panel (text, tool steps, approval cards) and a memory inspector
 * (records of the current scope, search, record detail with provenance and audit, the raw JSONL
 * lines with digests and a verify button). Plain TypeScript and DOM.
 */
import { ApiFailure, createApi, type Api, type ApprovalView, type RecordView, type RunEvent, type StoreView } from './api.ts'

type Child = Node | string | null | undefined | false
function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Record<string, string | boolean | ((event: Event) => void)> = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value)
    else if (value === true) element.setAttribute(name, '')
    else if (value !== false) element.setAttribute(name, value)
  }
  for (const child of children) if (child !== null && child !== undefined && child !== false) element.append(child)
  return element
}

const json = (value: unknown) => JSON.stringify(value, null, 2)
const short = (digest: string | null) => (digest ? `${digest.slice(0, 12)}…` : 'null')

export interface PlaygroundOptions {
  /** Prefix of the agent routes. Default `/__agents`. */
  base?: string
}

/** Mounts the playground into `root` and returns a function that removes it. */
export async function mountPlayground(root: HTMLElement, options: PlaygroundOptions = {}): Promise<() => void> {
  let user = localStorage.getItem('vam.user') ?? ''
  let agent = ''
  let store = ''
  const api: Api = createApi(options.base ?? '/__agents', () => user)
  const threadKey = () => `vam.thread.${agent}.${user}`
  const threadOf = () => localStorage.getItem(threadKey()) ?? undefined

  const userSelect = h('select', { id: 'vam-user', onchange: () => { user = userSelect.value; localStorage.setItem('vam.user', user); void switchContext() } })
  const agentSelect = h('select', { id: 'vam-agent', onchange: () => { agent = agentSelect.value; void switchContext() } })
  const threadLabel = h('code', { 'aria-label': 'Current thread' }, 'new thread')
  const newThread = h('button', { type: 'button', onclick: () => { localStorage.removeItem(threadKey()); void switchContext() } }, 'New thread')
  const transcript = h('ol', { class: 'transcript', 'aria-live': 'polite', 'aria-label': 'Conversation' })
  const input = h('input', { id: 'vam-input', type: 'text', autocomplete: 'off', placeholder: 'remember I prefer window seats · what seat do I prefer? · forget <id>' })
  const sendButton = h('button', { type: 'submit' }, 'Send')
  const form = h('form', { class: 'composer', onsubmit: (event: Event) => { event.preventDefault(); void send() } },
    h('label', { for: 'vam-input', class: 'visually-hidden' }, 'Message'), input, sendButton)
  const status = h('p', { class: 'status', role: 'status' })

  const storeSelect = h('select', { id: 'vam-store', onchange: () => { store = storeSelect.value; void refreshInspector() } })
  const scopeLabel = h('code', { 'aria-label': 'Scope' })
  const searchInput = h('input', { id: 'vam-search', type: 'search', placeholder: 'Search memory' })
  const searchForm = h('form', { class: 'search', role: 'search', onsubmit: (event: Event) => { event.preventDefault(); void search() } },
    h('label', { for: 'vam-search', class: 'visually-hidden' }, 'Search memory'), searchInput, h('button', { type: 'submit' }, 'Search'))
  const showAll = h('input', { id: 'vam-all', type: 'checkbox', onchange: () => void refreshInspector() })
  const recordsList = h('ul', { class: 'records', 'aria-label': 'Records' })
  const recordsTitle = h('h3', {}, 'Records')
  const detail = h('section', { class: 'detail', 'aria-label': 'Record detail' }, h('p', { class: 'muted' }, 'Select a record to see its provenance, audit and history.'))
  const logList = h('ol', { class: 'log', 'aria-label': 'JSONL lines' })
  const verifyResult = h('p', { role: 'status', class: 'verify' })
  const verifyButton = h('button', { type: 'button', onclick: () => void verify() }, 'Verify log')
  const exportLink = h('a', { href: '#', download: '' }, 'Export scope (JSON)')

  root.replaceChildren(h('div', { class: 'playground' },
    h('header', {},
      h('h1', {}, 'Agent memory playground'),
      h('label', { for: 'vam-agent' }, 'Agent '), agentSelect,
      h('label', { for: 'vam-user' }, 'User '), userSelect,
      h('span', { class: 'thread' }, 'Thread ', threadLabel, ' ', newThread)),
    h('main', {},
      h('section', { class: 'chat', 'aria-labelledby': 'vam-chat-title' }, h('h2', { id: 'vam-chat-title' }, 'Chat'), transcript, form, status),
      h('section', { class: 'inspector', 'aria-labelledby': 'vam-inspector-title' },
        h('h2', { id: 'vam-inspector-title' }, 'Memory inspector'),
        h('p', {}, h('label', { for: 'vam-store' }, 'Store '), storeSelect, ' scope ', scopeLabel),
        searchForm,
        h('p', {}, showAll, h('label', { for: 'vam-all' }, ' include superseded and deleted')),
        recordsTitle, recordsList, detail,
        h('h3', {}, 'JSONL lines of this scope'), h('p', {}, verifyButton, ' ', exportLink), verifyResult, logList))))

  const showError = (error: unknown) => {
    status.textContent = error instanceof ApiFailure ? error.error.message : String(error)
    status.className = 'status error'
  }

  // One chat entry per run; events of the run append to it.
  const renderRun = (entry: HTMLElement) => {
    let text: HTMLElement | undefined
    const steps = new Map<string, HTMLElement>()
    return (event: RunEvent) => {
      handle(event)
      // Keep the newest step in view as it streams in.
      transcript.scrollTop = transcript.scrollHeight
    }
    function handle(event: RunEvent): void {
      switch (event.type) {
        case 'start':
          if (typeof event.threadId === 'string' && event.threadId) {
            localStorage.setItem(threadKey(), event.threadId)
            threadLabel.textContent = event.threadId
          }
          break
        case 'text-delta':
          text ??= entry.appendChild(h('p', { class: 'assistant' }))
          text.textContent += String(event.text)
          break
        case 'tool-call': {
          const step = h('details', { class: 'tool-step', open: true },
            h('summary', {}, `Tool ${String(event.toolName)}`),
            h('pre', { 'aria-label': 'Tool input' }, json(event.input)))
          steps.set(String(event.toolCallId), step)
          entry.append(step)
          text = undefined
          break
        }
        case 'tool-result':
        case 'tool-error': {
          const step = steps.get(String(event.toolCallId)) ?? entry.appendChild(h('details', { class: 'tool-step', open: true }, h('summary', {}, `Tool ${String(event.toolName)}`)))
          const ok = event.type === 'tool-result'
          step.append(h('p', { class: ok ? 'result' : 'error' }, `${ok ? 'Result' : 'Error'} in ${Number(event.durationMs).toFixed(1)} ms`),
            h('pre', { 'aria-label': ok ? 'Tool result' : 'Tool error' }, ok ? json(event.output) : (event.error as { message: string }).message))
          text = undefined
          break
        }
        case 'approval-request':
          entry.append(approvalCard(event.approval as ApprovalView))
          text = undefined
          break
        case 'approval-decision':
          entry.append(h('p', { class: 'decision' }, `${event.approved ? 'Approved' : 'Denied'}${event.approver ? ` by ${String(event.approver)}` : ''}${event.reason ? `: ${String(event.reason)}` : ''}`))
          break
        case 'error':
          entry.append(h('p', { class: 'error', role: 'alert' }, (event.error as { message: string }).message))
          break
        case 'finish':
          if (event.status === 'completed' || event.status === 'failed') void refreshInspector()
          break
      }
    }
  }

  const approvalCard = (approval: ApprovalView): HTMLElement => {
    const reason = h('input', { type: 'text', 'aria-label': 'Reason', placeholder: 'Reason (optional)' })
    const card = h('div', { class: 'approval', role: 'group', 'aria-label': `Approval ${approval.id}`, 'data-approval': approval.id },
      h('p', {}, h('strong', {}, `${approval.toolName} needs your approval`)),
      h('pre', {}, json(approval.input)),
      h('p', { class: 'muted' }, approval.reason))
    const decide = async (approved: boolean) => {
      card.querySelectorAll('button').forEach(button => { button.disabled = true })
      reason.disabled = true
      const entry = h('li', { class: 'turn' })
      transcript.append(entry)
      try {
        await api.decide(agent, approval.id, approved, reason.value.trim(), renderRun(entry))
        card.classList.add('decided')
      } catch (error) {
        showError(error)
      }
      void refreshInspector()
    }
    card.append(h('p', { class: 'actions' }, reason, ' ',
      h('button', { type: 'button', class: 'approve', onclick: () => void decide(true) }, 'Approve'), ' ',
      h('button', { type: 'button', class: 'deny', onclick: () => void decide(false) }, 'Deny')))
    return card
  }

  async function send(): Promise<void> {
    const message = input.value.trim()
    if (!message || !agent) return
    input.value = ''
    status.textContent = ''
    status.className = 'status'
    const entry = h('li', { class: 'turn' }, h('p', { class: 'user' }, h('span', { class: 'who' }, `${user}: `), message))
    transcript.append(entry)
    transcript.scrollTop = transcript.scrollHeight
    sendButton.disabled = true
    try {
      await api.run(agent, message, threadOf(), renderRun(entry))
    } catch (error) {
      showError(error)
    } finally {
      sendButton.disabled = false
    }
  }

  const recordItem = (record: RecordView, score?: number) =>
    h('li', { class: `record ${record.status}` },
      h('button', { type: 'button', class: 'link', onclick: () => void showRecord(record.id) }, record.content),
      h('span', { class: 'muted' }, ` ${record.kind} · ${record.status}${score !== undefined ? ` · score ${score.toFixed(2)}` : ''} · ${record.id}`))

  async function refreshInspector(): Promise<void> {
    if (!agent || !store) return
    try {
      const [page, log] = await Promise.all([api.records(agent, store, showAll.checked ? 'all' : 'active'), currentStore()?.hasLog ? api.log(agent, store) : Promise.resolve({ lines: [] })])
      recordsTitle.textContent = `Records (${page.total})`
      recordsList.replaceChildren(...(page.records.length ? page.records.map(record => recordItem(record)) : [h('li', { class: 'muted' }, 'No records in this scope.')]))
      logList.replaceChildren(...log.lines.map(line => h('li', { value: String(line.line) },
        h('span', { class: 'digest', title: line.digest }, `#${line.seq} ${line.type} ${line.recordId} v${line.version} digest ${short(line.digest)} prev ${short(line.prev)}`),
        h('pre', {}, line.text))))
      exportLink.href = api.exportUrl(agent, store)
    } catch (error) {
      recordsList.replaceChildren(h('li', { class: 'error' }, error instanceof ApiFailure ? error.error.message : String(error)))
    }
  }

  async function search(): Promise<void> {
    const query = searchInput.value.trim()
    if (!query) return void refreshInspector()
    try {
      const { hits } = await api.search(agent, store, query)
      recordsTitle.textContent = `Search results for “${query}” (${hits.length})`
      recordsList.replaceChildren(...(hits.length ? hits.map(hit => recordItem(hit.record, hit.score)) : [h('li', { class: 'muted' }, 'Nothing found.')]))
    } catch (error) {
      showError(error)
    }
  }

  async function showRecord(id: string): Promise<void> {
    try {
      const found = await api.record(agent, store, id)
      const r = found.record
      detail.replaceChildren(
        h('h3', {}, `Record ${r.id}`),
        h('p', {}, r.content),
        h('dl', {},
          h('dt', {}, 'Status'), h('dd', {}, `${r.status} (version ${r.version})${r.deleteReason ? `, reason: ${r.deleteReason}` : ''}`),
          h('dt', {}, 'Kind and tags'), h('dd', {}, `${r.kind}${r.tags.length ? ` · ${r.tags.join(', ')}` : ''}`),
          h('dt', {}, 'Created / updated'), h('dd', {}, `${r.createdAt} / ${r.updatedAt}`),
          h('dt', {}, 'Scope'), h('dd', {}, h('code', {}, JSON.stringify(r.scope))),
          h('dt', {}, 'Provenance'), h('dd', {}, h('pre', {}, json(r.provenance))),
          h('dt', {}, 'Audit'), h('dd', {}, h('pre', {}, json(r.audit))),
          r.supersedes.length ? h('dt', {}, 'Supersedes') : null, r.supersedes.length ? h('dd', {}, r.supersedes.join(', ')) : null,
          r.supersededBy ? h('dt', {}, 'Superseded by') : null, r.supersededBy ? h('dd', {}, r.supersededBy) : null),
        h('h4', {}, 'History'),
        h('ol', {}, ...found.events.map(line => h('li', {}, `${line.type} v${line.version} at ${line.at} (line ${line.line}, digest ${short(line.digest)})`))))
    } catch (error) {
      detail.replaceChildren(h('p', { class: 'error' }, error instanceof ApiFailure ? error.error.message : String(error)))
    }
  }

  async function verify(): Promise<void> {
    try {
      const result = await api.verify(agent, store)
      verifyResult.className = `verify ${result.ok ? 'ok' : 'error'}`
      verifyResult.textContent = result.ok
        ? `Chain verified: ${result.lines} ${result.lines === 1 ? 'line' : 'lines'}, every digest matches${result.torn ? ` (torn tail at line ${result.torn.line})` : ''}.`
        : `Chain broken at line ${result.firstBad?.line}: ${result.firstBad?.reason}`
    } catch (error) {
      verifyResult.textContent = error instanceof ApiFailure ? error.error.message : String(error)
    }
  }

  let stores: StoreView[] = []
  const currentStore = () => stores.find(candidate => candidate.name === store)

  async function switchContext(): Promise<void> {
    transcript.replaceChildren()
    detail.replaceChildren(h('p', { class: 'muted' }, 'Select a record to see its provenance, audit and history.'))
    verifyResult.textContent = ''
    searchInput.value = ''
    threadLabel.textContent = threadOf() ?? 'new thread'
    try {
      stores = (await api.stores(agent)).stores
      storeSelect.replaceChildren(...stores.map(candidate => h('option', { value: candidate.name }, candidate.name)))
      store = stores.some(candidate => candidate.name === store) ? store : stores[0]?.name ?? ''
      storeSelect.value = store
      const current = currentStore()
      scopeLabel.textContent = current?.scope ? JSON.stringify(current.scope) : 'off for this user'
      verifyButton.disabled = !current?.hasLog
      // A continuing thread shows its earlier turns again (text only) after a reload or a user switch.
      const threadId = threadOf()
      if (threadId) {
        const earlier = await api.thread(agent, threadId).catch(() => undefined)
        for (const message of earlier?.messages ?? []) {
          transcript.append(h('li', { class: 'turn earlier' }, message.role === 'user'
            ? h('p', { class: 'user' }, h('span', { class: 'who' }, `${user}: `), message.text)
            : h('p', { class: 'assistant' }, message.text)))
        }
        transcript.scrollTop = transcript.scrollHeight
      }
      // Approvals left pending (an earlier session, a reload) are answered here too.
      const { approvals } = await api.approvals(agent)
      if (approvals.length) {
        const entry = h('li', { class: 'turn' }, h('p', { class: 'muted' }, `${approvals.length} pending approval${approvals.length === 1 ? '' : 's'}`))
        for (const approval of approvals) entry.append(approvalCard(approval))
        transcript.append(entry)
      }
    } catch (error) {
      showError(error)
    }
    await refreshInspector()
  }

  const { users } = await api.users()
  if (!users.includes(user)) user = users[0] ?? ''
  userSelect.replaceChildren(...users.map(id => h('option', { value: id }, id)))
  userSelect.value = user
  const { agents } = await api.agents()
  agentSelect.replaceChildren(...agents.map(candidate => h('option', { value: candidate.name }, candidate.name)))
  agent = agents[0]?.name ?? ''
  if (!agent) status.textContent = 'No agents found in server/agents.'
  await switchContext()
  return () => root.replaceChildren()
}

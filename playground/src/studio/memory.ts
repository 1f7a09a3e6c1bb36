/**
 * The memory view: the store and scope pickers, the records table (server-side filters and
 * paging), ranked search with the matched words marked, and a record's detail with provenance,
 * audit, its versions side by side with a word diff, and the actions (pin, unpin, edit, delete)
 * that run through the store's write policy and approval cards like the model's tools.
 */
import { useEffect, useState } from 'preact/hooks'
import { diffWords } from 'diff'
import { failureText, type Api, type ApprovalView, type JournalRunView, type LogLineView, type RecordView, type ScopeView, type SearchHitView, type StoreView, type TablePageView } from '../api.ts'
import { applyEvent, day, decisionsOf, highlighted, html, json, plural, RunView, short, when } from './ui.ts'

export const PAGE_SIZE = 50

interface Filter { status: string; kind: string; tag: string; pinned: string; createdFrom: string; createdTo: string; eventFrom: string; eventTo: string }
const NO_FILTER: Filter = { status: 'active', kind: '', tag: '', pinned: '', createdFrom: '', createdTo: '', eventFrom: '', eventTo: '' }

const scopeText = (scope: Record<string, string> | null | undefined) => (scope ? Object.entries(scope).map(([key, value]) => `${key}=${value}`).join(' · ') : 'off for this user')

function Diff(props: { before: RecordView; after: RecordView }) {
  const parts = diffWords(props.before.content, props.after.content)
  const changes: string[] = []
  if (props.before.pinned !== props.after.pinned) changes.push(props.after.pinned ? 'pinned' : 'unpinned')
  if (props.before.tags.join(',') !== props.after.tags.join(',')) changes.push(`tags ${props.before.tags.join(', ') || '—'} → ${props.after.tags.join(', ') || '—'}`)
  if ((props.before.title ?? '') !== (props.after.title ?? '')) changes.push(`title ${props.before.title ?? '—'} → ${props.after.title ?? '—'}`)
  return html`<div class="diff" aria-label=${`Changes from ${props.before.id} to ${props.after.id}`}>
    <p>${parts.map((part, index) => (part.added ? html`<ins key=${index}>${part.value}</ins>` : part.removed ? html`<del key=${index}>${part.value}</del>` : html`<span key=${index}>${part.value}</span>`))}</p>
    ${changes.length ? html`<p class="muted">${changes.join('; ')}</p>` : null}
  </div>`
}

function RecordDetail(props: { api: Api; agent: string; store: string; user: string; id: string; onChanged: (id?: string) => void; onOpen: (id: string) => void }) {
  const { api, agent, store, id } = props
  const [record, setRecord] = useState<RecordView | undefined>()
  const [versions, setVersions] = useState<RecordView[]>([])
  const [events, setEvents] = useState<LogLineView[]>([])
  const [error, setError] = useState<string | undefined>()
  const [editing, setEditing] = useState(false)
  const [content, setContent] = useState('')
  const [reason, setReason] = useState('')
  const [runs, setRuns] = useState<JournalRunView[]>([])

  const load = async () => {
    try {
      const [detail, chain] = await Promise.all([api.record(agent, store, id), api.versions(agent, store, id)])
      setRecord(detail.record)
      setContent(detail.record.content)
      setVersions(chain.versions)
      setEvents(chain.events)
      setError(undefined)
    } catch (failure) {
      setError(failureText(failure))
    }
  }
  // The action runs stay when an action moves the detail to the new version; picking another record remounts the detail.
  useEffect(() => {
    setEditing(false)
    void load()
  }, [agent, store, id])

  /** Streams an action (or its decision) into the detail's action runs; refreshes once a write may have happened. */
  const stream = async (start: (onEvent: (event: { type: string; [key: string]: unknown }) => void) => Promise<void>, entry: { kind: JournalRunView['kind']; input?: string; approvalId?: string }) => {
    const started = Date.now()
    let written: string | undefined
    try {
      await start((event) => {
        if (event.type === 'tool-result') {
          const output = event.output as { record?: { id?: string } } | undefined
          written = output?.record?.id ?? id
        }
        setRuns(current => applyEvent(current, event, started, entry))
      })
    } catch (failure) {
      setError(failureText(failure))
    }
    if (written) {
      props.onChanged(written)
      // A delete keeps the id: draw its new state here (a new version arrives through `id`).
      if (written === id) void load()
    }
  }
  const act = (action: Record<string, unknown>, label: string) => stream(onEvent => api.action(agent, store, id, action, onEvent), { kind: 'action', input: label })
  const decisions = decisionsOf(runs)
  const statusOf = (approval: ApprovalView): ApprovalView['status'] => {
    const decided = decisions.get(approval.id)
    return decided ? (decided.approved ? 'approved' : 'denied') : approval.status
  }
  const decide = (approval: ApprovalView, approved: boolean, why: string) => stream(onEvent => api.decide(agent, approval.id, approved, why, onEvent), { kind: 'decision', approvalId: approval.id })

  if (error && !record) return html`<section class="detail" aria-label="Record detail"><p class="error" role="alert">${error}</p></section>`
  if (!record) return html`<section class="detail" aria-label="Record detail"><p class="muted">Loading…</p></section>`
  const r = record
  const active = r.status === 'active'
  return html`<section class="detail" aria-label="Record detail">
    <h3>Record <code>${r.id}</code></h3>
    <p class="content">${r.content}</p>
    <dl>
      <dt>Status</dt><dd>${r.status} (version ${r.version})${r.deleteReason ? `, reason: ${r.deleteReason}` : ''}</dd>
      <dt>Kind and tags</dt><dd>${r.kind}${r.tags.length ? ` · ${r.tags.join(', ')}` : ''}${r.pinned ? ' · pinned' : ''}</dd>
      <dt>Created / updated</dt><dd>${r.createdAt} / ${r.updatedAt}</dd>
      <dt>Scope</dt><dd><code>${JSON.stringify(r.scope)}</code></dd>
      <dt>Provenance</dt><dd><pre>${json(r.provenance)}</pre></dd>
      <dt>Audit</dt><dd><pre>${json(r.audit)}</pre></dd>
      ${r.supersededBy ? html`<dt>Superseded by</dt><dd><button type="button" class="link" onClick=${() => props.onOpen(r.supersededBy!)}>${r.supersededBy}</button></dd>` : null}
    </dl>
    ${active ? html`<div class="record-actions" role="group" aria-label="Record actions">
      <button type="button" onClick=${() => void act({ action: r.pinned ? 'unpin' : 'pin' }, `${r.pinned ? 'unpin' : 'pin'} ${r.id}`)}>${r.pinned ? 'Unpin' : 'Pin'}</button>
      <button type="button" aria-expanded=${editing ? 'true' : 'false'} onClick=${() => setEditing(!editing)}>Edit</button>
      <input type="text" aria-label="Delete reason" placeholder="Reason (optional)" value=${reason} onInput=${(event: Event) => setReason((event.target as HTMLInputElement).value)} />
      <button type="button" class="deny" onClick=${() => void act({ action: 'delete', ...(reason.trim() ? { reason: reason.trim() } : {}) }, `delete ${r.id}`)}>Delete</button>
    </div>` : null}
    ${active && editing ? html`<form class="edit" onSubmit=${(event: Event) => { event.preventDefault(); setEditing(false); void act({ action: 'edit', content }, `edit ${r.id}`) }}>
      <label for="vam-edit">New content</label>
      <textarea id="vam-edit" rows="3" value=${content} onInput=${(event: Event) => setContent((event.target as HTMLTextAreaElement).value)}></textarea>
      <button type="submit">Save as new version</button>
    </form>` : null}
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    ${runs.length ? html`<ol class="transcript action-runs" aria-label="Action">${runs.map(run => html`<${RunView} key=${run.id} run=${run} user=${props.user} decisions=${decisions} statusOf=${statusOf} onDecide=${decide} />`)}</ol>` : null}
    <h4>Versions</h4>
    <ol class="versions" aria-label="Versions">
      ${versions.map((version, index) => html`<li key=${version.id} aria-current=${version.id === r.id ? 'true' : undefined}>
        <p><button type="button" class="link" onClick=${() => props.onOpen(version.id)}>${version.id}</button> <span class="muted">${version.status} · ${when(version.createdAt)}${version.pinned ? ' · pinned' : ''}</span></p>
        ${index > 0 ? html`<${Diff} before=${versions[index - 1]!} after=${version} />` : html`<p>${version.content}</p>`}
      </li>`)}
    </ol>
    <h4>History</h4>
    <ol aria-label="Record history">${events.map(line => html`<li key=${line.line}>${line.type} ${line.recordId} v${line.version} at ${line.at} (line ${line.line}, digest ${short(line.digest)})</li>`)}</ol>
  </section>`
}

export function Memory(props: { api: Api; agent: string; user: string; stores: StoreView[]; store: string; onStore: (store: string) => void; onUser: (user: string) => void; version: number }) {
  const { api, agent, store } = props
  const current = props.stores.find(candidate => candidate.name === store)
  const [filter, setFilter] = useState<Filter>(NO_FILTER)
  const [offset, setOffset] = useState(0)
  const [page, setPage] = useState<TablePageView | undefined>()
  const [scopes, setScopes] = useState<ScopeView[]>([])
  const [query, setQuery] = useState('')
  const [hits, setHits] = useState<{ query: string; hits: SearchHitView[] } | undefined>()
  const [selected, setSelected] = useState<string | undefined>()
  const [session, setSession] = useState(0)
  const open = (id: string) => {
    setSession(count => count + 1)
    setSelected(id)
  }
  const [error, setError] = useState<string | undefined>()
  const [changes, setChanges] = useState(0)

  useEffect(() => {
    if (!agent || !store || !current?.scope) return
    let live = true
    api.table(agent, store, { ...filter, offset, limit: PAGE_SIZE }).then(answer => { if (live) { setPage(answer); setError(undefined) } }, failure => { if (live) setError(failureText(failure)) })
    return () => { live = false }
  }, [agent, store, props.user, filter, offset, changes, props.version, current?.scope])

  useEffect(() => {
    if (!agent || !store || !current?.hasLog) return setScopes([])
    api.scopes(agent, store).then(answer => setScopes(answer.scopes), () => setScopes([]))
  }, [agent, store, props.user, changes, props.version])

  const set = (name: keyof Filter) => (event: Event) => {
    setOffset(0)
    setFilter({ ...filter, [name]: (event.target as HTMLInputElement).value })
  }
  const search = async (event: Event) => {
    event.preventDefault()
    const q = query.trim()
    if (!q) return setHits(undefined)
    try {
      setHits({ query: q, hits: (await api.search(agent, store, q)).hits })
    } catch (failure) {
      setError(failureText(failure))
    }
  }
  const changed = (id?: string) => {
    setChanges(count => count + 1)
    if (id) setSelected(id)
  }

  const users = scopes.filter(entry => typeof entry.scope.user === 'string')
  const last = page ? Math.min(page.offset + page.records.length, page.total) : 0
  return html`<div class="memory">
    <div class="pickers">
      <label for="vam-store">Store</label>
      <select id="vam-store" value=${store} onChange=${(event: Event) => props.onStore((event.target as HTMLSelectElement).value)}>
        ${props.stores.map(candidate => html`<option key=${candidate.name} value=${candidate.name}>${candidate.name} (${candidate.kind})</option>`)}
      </select>
      <label for="vam-scope">Scope</label>
      <select id="vam-scope" value=${props.user} onChange=${(event: Event) => props.onUser((event.target as HTMLSelectElement).value)}>
        ${users.some(entry => entry.scope.user === props.user) ? null : html`<option value=${props.user}>${scopeText(current?.scope)} (empty)</option>`}
        ${users.map(entry => html`<option key=${entry.scope.user} value=${entry.scope.user}>${scopeText(entry.scope)} (${plural(entry.lines, 'line')})</option>`)}
      </select>
      <code aria-label="Current scope">${JSON.stringify(current?.scope ?? null)}</code>
    </div>
    ${error ? html`<p class="error" role="alert">${error}</p>` : null}
    <form class="search" role="search" onSubmit=${search}>
      <label for="vam-search" class="visually-hidden">Search memory</label>
      <input id="vam-search" type="search" placeholder="Search memory (ranked)" value=${query} onInput=${(event: Event) => setQuery((event.target as HTMLInputElement).value)} />
      <button type="submit">Search</button>
      ${hits ? html`<button type="button" onClick=${() => { setHits(undefined); setQuery('') }}>Clear</button>` : null}
    </form>
    ${hits ? html`<section aria-label="Search results">
      <h3>Search results for “${hits.query}” (${hits.hits.length})</h3>
      ${hits.hits.length ? html`<ol class="hits">${hits.hits.map(hit => html`<li key=${hit.record.id}>
        <button type="button" class="link" onClick=${() => open(hit.record.id)}>${highlighted(hit.record.content, hit.highlights)}</button>
        <span class="muted"> ${hit.record.kind} · score ${hit.score.toFixed(2)}</span>
      </li>`)}</ol>` : html`<p class="muted">Nothing found.</p>`}
    </section>` : null}
    <fieldset class="filters">
      <legend>Filters</legend>
      <label>Status <select aria-label="Status" value=${filter.status} onChange=${set('status')}>${['active', 'all', 'superseded', 'deleted'].map(value => html`<option key=${value} value=${value}>${value}</option>`)}</select></label>
      <label>Kind <select aria-label="Kind" value=${filter.kind} onChange=${set('kind')}><option value="">any</option>${(page?.kinds ?? []).map(value => html`<option key=${value} value=${value}>${value}</option>`)}</select></label>
      <label>Tag <select aria-label="Tag" value=${filter.tag} onChange=${set('tag')}><option value="">any</option>${(page?.tags ?? []).map(value => html`<option key=${value} value=${value}>${value}</option>`)}</select></label>
      <label>Pinned <select aria-label="Pinned" value=${filter.pinned} onChange=${set('pinned')}><option value="">any</option><option value="true">pinned</option><option value="false">not pinned</option></select></label>
      <label>Created from <input type="date" aria-label="Created from" value=${filter.createdFrom} onChange=${set('createdFrom')} /></label>
      <label>to <input type="date" aria-label="Created to" value=${filter.createdTo} onChange=${set('createdTo')} /></label>
      <label>Event from <input type="date" aria-label="Event from" value=${filter.eventFrom} onChange=${set('eventFrom')} /></label>
      <label>to <input type="date" aria-label="Event to" value=${filter.eventTo} onChange=${set('eventTo')} /></label>
      <button type="button" onClick=${() => { setOffset(0); setFilter(NO_FILTER) }}>Reset</button>
    </fieldset>
    <h3 id="vam-records-title">Records (${page ? page.total.toLocaleString('en-US') : '…'})</h3>
    <div class="table-wrap">
      <table aria-labelledby="vam-records-title">
        <thead><tr><th scope="col">Content</th><th scope="col">Kind</th><th scope="col">Tags</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Updated</th></tr></thead>
        <tbody>
          ${page && page.records.length === 0 ? html`<tr><td colspan="6" class="muted">No records match.</td></tr>` : null}
          ${(page?.records ?? []).map(record => html`<tr key=${record.id} class=${`record ${record.status}`} aria-selected=${record.id === selected ? 'true' : undefined}>
            <td><button type="button" class="link" onClick=${() => open(record.id)}>${record.pinned ? '📌 ' : ''}${record.content}</button></td>
            <td>${record.kind}</td><td>${record.tags.join(', ')}</td><td>${record.status}</td><td>${day(record.createdAt)}</td><td>${day(record.updatedAt)}</td>
          </tr>`)}
        </tbody>
      </table>
    </div>
    <p class="pager">
      <button type="button" disabled=${!page || page.offset === 0} onClick=${() => setOffset(Math.max(0, offset - PAGE_SIZE))}>Previous page</button>
      <span role="status">${page && page.total ? `${(page.offset + 1).toLocaleString('en-US')}–${last.toLocaleString('en-US')} of ${page.total.toLocaleString('en-US')}` : ''}</span>
      <button type="button" disabled=${!page || last >= page.total} onClick=${() => setOffset(offset + PAGE_SIZE)}>Next page</button>
    </p>
    ${selected ? html`<${RecordDetail} key=${session} api=${api} agent=${agent} store=${store} user=${props.user} id=${selected} onChanged=${changed} onOpen=${setSelected} />` : html`<p class="muted">Select a record to see its provenance, audit, versions and actions.</p>`}
  </div>`
}

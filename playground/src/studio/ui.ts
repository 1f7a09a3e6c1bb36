/** Shared parts of the studio UI: the `html` tag (htm over preact), formatting, the approval card, run rendering. */
import { h, type ComponentChildren, type VNode } from 'preact'
import { useState } from 'preact/hooks'
import htm from 'htm'
import type { ApprovalView, JournalEvent, JournalRunView, RunEvent } from '../api.ts'

export const html = htm.bind(h) as (strings: TemplateStringsArray, ...values: unknown[]) => VNode

export const json = (value: unknown) => JSON.stringify(value, null, 2)
export const short = (digest: string | null) => (digest ? `${digest.slice(0, 12)}…` : 'null')
export const day = (instant: string) => instant.slice(0, 10)
export const when = (instant: string) => instant.replace('T', ' ').slice(0, 19)
export const plural = (count: number, word: string) => `${count.toLocaleString('en-US')} ${word}${count === 1 ? '' : 's'}`

/** `text` with the `[start, end)` ranges wrapped in `<mark>`. */
export function highlighted(text: string, ranges: readonly [number, number][]): ComponentChildren {
  const parts: ComponentChildren[] = []
  let at = 0
  for (const [start, end] of ranges) {
    if (start < at) continue
    if (start > at) parts.push(text.slice(at, start))
    parts.push(html`<mark>${text.slice(start, end)}</mark>`)
    at = end
  }
  parts.push(text.slice(at))
  return parts
}

/** An approval request with Approve and Deny (and an optional reason), or its decision once decided. */
export function ApprovalCard(props: { approval: ApprovalView; status: ApprovalView['status']; decision?: { approved: boolean; reason?: string; approver?: string } | undefined; onDecide: (approved: boolean, reason: string) => Promise<void> }) {
  const { approval } = props
  const [reason, setReason] = useState('')
  const [busy, setBusy] = useState(false)
  const decided = props.status !== 'pending'
  const decide = async (approved: boolean) => {
    setBusy(true)
    try {
      await props.onDecide(approved, reason.trim())
    } finally {
      setBusy(false)
    }
  }
  return html`<div class=${`approval ${decided ? 'decided' : ''}`} role="group" aria-label=${`Approval ${approval.id}`} data-approval=${approval.id}>
    <p><strong>${approval.toolName} needs your approval</strong> <span class="muted">${decided ? `(${props.status})` : ''}</span></p>
    <pre>${json(approval.input)}</pre>
    <p class="muted">${approval.reason}</p>
    ${decided ? null : html`<p class="actions">
      <input type="text" aria-label="Reason" placeholder="Reason (optional)" value=${reason} disabled=${busy} onInput=${(event: Event) => setReason((event.target as HTMLInputElement).value)} />
      <button type="button" class="approve" disabled=${busy} onClick=${() => void decide(true)}>Approve</button>
      <button type="button" class="deny" disabled=${busy} onClick=${() => void decide(false)}>Deny</button>
    </p>`}
  </div>`
}

/** A run being streamed: creates the run on `start` and appends each event (text deltas merged). */
export function applyEvent(runs: JournalRunView[], event: RunEvent, started: number, entry: { kind: JournalRunView['kind']; input?: string; approvalId?: string }): JournalRunView[] {
  const at = Date.now() - started
  if (event.type === 'start') {
    const run: JournalRunView = { id: `live_${String(event.runId)}_${started}`, runId: String(event.runId), kind: entry.kind, startedAt: new Date(started).toISOString(), status: 'running', events: [{ ...event, at }], ...(entry.input !== undefined ? { input: entry.input } : {}), ...(entry.approvalId ? { approvalId: entry.approvalId } : {}) }
    return [...runs, run]
  }
  const last = runs.at(-1)
  if (!last) return runs
  const events = [...last.events]
  const previous = events.at(-1)
  if (event.type === 'text-delta' && previous?.type === 'text-delta') events[events.length - 1] = { ...previous, text: String(previous.text) + String(event.text) }
  else events.push({ ...event, at } as JournalEvent)
  const finished = event.type === 'finish' ? { status: String(event.status), durationMs: at } : {}
  return [...runs.slice(0, -1), { ...last, ...finished, events }]
}

/** The decision of each approval found in `runs` (its `approval-decision` event). */
export function decisionsOf(runs: readonly JournalRunView[]): Map<string, { approved: boolean; reason?: string; approver?: string }> {
  const decisions = new Map<string, { approved: boolean; reason?: string; approver?: string }>()
  for (const run of runs) {
    for (const event of run.events) {
      if (event.type === 'approval-decision') decisions.set(String(event.approvalId), { approved: !!event.approved, ...(event.reason ? { reason: String(event.reason) } : {}), ...(event.approver ? { approver: String(event.approver) } : {}) })
    }
  }
  return decisions
}

function eventLabel(event: JournalEvent): string {
  switch (event.type) {
    case 'tool-call': return `tool call ${String(event.toolName)}`
    case 'tool-result': return `tool result ${String(event.toolName)} (${Number(event.durationMs).toFixed(1)} ms)`
    case 'tool-error': return `tool error ${String(event.toolName)} (${Number(event.durationMs).toFixed(1)} ms)`
    case 'approval-request': return `approval requested for ${String((event.approval as ApprovalView).toolName)}`
    case 'approval-decision': return `${event.approved ? 'approved' : 'denied'}${event.approver ? ` by ${String(event.approver)}` : ''}`
    case 'text-delta': return 'text'
    case 'finish': return `finish: ${String(event.status)}`
    default: return event.type
  }
}

/** The steps of one run (text, tool steps with input, output and duration, approval cards, decisions) and its timeline. */
export function RunView(props: { run: JournalRunView; user: string; decisions: Map<string, { approved: boolean; reason?: string; approver?: string }>; statusOf: (approval: ApprovalView) => ApprovalView['status']; onDecide: (approval: ApprovalView, approved: boolean, reason: string) => Promise<void> }) {
  const { run } = props
  const steps = new Map<string, { call?: JournalEvent; result?: JournalEvent }>()
  const items: VNode[] = []
  const stepOf = (id: string) => {
    let step = steps.get(id)
    if (!step) steps.set(id, step = {})
    return step
  }
  for (const event of run.events) {
    if (event.type === 'tool-call') stepOf(String(event.toolCallId)).call = event
    if (event.type === 'tool-result' || event.type === 'tool-error') stepOf(String(event.toolCallId)).result = event
  }
  const shown = new Set<string>()
  // Calls whose result comes in a later run (after their approval).
  const awaiting = new Set(run.events.filter(event => event.type === 'approval-request').map(event => String((event.approval as ApprovalView).toolCallId)))
  run.events.forEach((event, index) => {
    switch (event.type) {
      case 'text-delta':
        items.push(html`<p class="assistant" key=${index}>${String(event.text)}</p>`)
        break
      case 'tool-call':
      case 'tool-result':
      case 'tool-error': {
        const id = String(event.toolCallId)
        if (shown.has(id)) break
        shown.add(id)
        const step = steps.get(id)!
        const result = step.result
        const ok = result?.type === 'tool-result'
        items.push(html`<details class="tool-step" open key=${index}>
          <summary>Tool ${String(event.toolName)}</summary>
          ${step.call ? html`<pre aria-label="Tool input">${json(step.call.input)}</pre>` : null}
          ${result ? html`<p class=${ok ? 'result' : 'error'}>${ok ? 'Result' : 'Error'} in ${Number(result.durationMs).toFixed(1)} ms</p>
            <pre aria-label=${ok ? 'Tool result' : 'Tool error'}>${ok ? json(result.output) : (result.error as { message: string }).message}</pre>` : html`<p class="muted">${awaiting.has(id) ? 'waiting for approval' : 'running…'}</p>`}
        </details>`)
        break
      }
      case 'approval-request': {
        const approval = event.approval as ApprovalView
        items.push(html`<${ApprovalCard} key=${approval.id} approval=${approval} status=${props.statusOf(approval)} decision=${props.decisions.get(approval.id)} onDecide=${(approved: boolean, reason: string) => props.onDecide(approval, approved, reason)} />`)
        break
      }
      case 'approval-decision':
        items.push(html`<p class="decision" key=${index}>${event.approved ? 'Approved' : 'Denied'}${event.approver ? ` by ${String(event.approver)}` : ''}${event.reason ? `: ${String(event.reason)}` : ''}</p>`)
        break
      case 'error':
        items.push(html`<p class="error" role="alert" key=${index}>${(event.error as { message: string }).message}</p>`)
        break
    }
  })
  return html`<li class="turn" data-run=${run.runId}>
    ${run.kind === 'message' && run.input !== undefined ? html`<p class="user"><span class="who">${props.user}: </span>${run.input}</p>` : null}
    ${run.kind === 'action' && run.input !== undefined ? html`<p class="muted">Studio action: ${run.input}</p>` : null}
    ${items}
    <details class="timeline">
      <summary>Run timeline${run.durationMs !== undefined ? ` · ${run.durationMs} ms` : ' · running'}</summary>
      <ol aria-label="Run timeline">${run.events.map((event, index) => html`<li key=${index}><code>+${event.at} ms</code> ${eventLabel(event)}</li>`)}</ol>
    </details>
  </li>`
}

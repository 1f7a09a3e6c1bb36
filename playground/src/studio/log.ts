/** The log view: the JSONL lines of the selected scope, paged (newest page first), verify with the broken line named, export and import. */
import { useEffect, useState } from 'preact/hooks'
import { failureText, type Api, type LinePageView, type StoreView } from '../api.ts'
import { html, plural, short } from './ui.ts'

export const LINES_PER_PAGE = 50

export function Log(props: { api: Api; agent: string; store: StoreView | undefined; version: number; onImported: () => void }) {
  const { api, agent } = props
  const store = props.store?.name ?? ''
  const [offset, setOffset] = useState<number | undefined>(undefined)
  const [page, setPage] = useState<LinePageView | undefined>()
  const [verdict, setVerdict] = useState<{ text: string; ok: boolean; line?: number } | undefined>()
  const [status, setStatus] = useState<{ text: string; error: boolean }>({ text: '', error: false })
  const [changes, setChanges] = useState(0)

  useEffect(() => {
    if (!agent || !store || !props.store?.hasLog) return
    api.lines(agent, store, offset, LINES_PER_PAGE).then(setPage, failure => setStatus({ text: failureText(failure), error: true }))
  }, [agent, store, offset, props.version, changes])

  if (!props.store?.hasLog) return html`<p class="muted">Store ${store} keeps no event log (an in-memory store or a plain adapter): there are no lines to show or verify.</p>`

  const verify = async () => {
    try {
      const result = await api.verify(agent, store)
      setVerdict(result.ok
        ? { ok: true, text: `Chain verified: ${plural(result.lines, 'line')}, every digest matches${result.torn ? ` (torn tail at line ${result.torn.line})` : ''}.` }
        : { ok: false, text: `Chain broken at line ${result.firstBad?.line}: ${result.firstBad?.reason}`, ...(result.firstBad ? { line: result.firstBad.line } : {}) })
    } catch (failure) {
      setVerdict({ ok: false, text: failureText(failure) })
    }
  }

  const importFile = async (event: Event) => {
    const input = event.target as HTMLInputElement
    const file = input.files?.[0]
    if (!file) return
    try {
      const data: unknown = JSON.parse(await file.text())
      const counts = await api.importScope(agent, store, data)
      setStatus({ text: `Imported ${plural(counts.added, 'record')} (${counts.skipped} already present, ${counts.duplicates} duplicates, ${counts.renamed} renamed, ${counts.expired} expired).`, error: false })
      setOffset(undefined)
      setChanges(count => count + 1)
      props.onImported()
    } catch (failure) {
      setStatus({ text: `Import failed: ${failureText(failure)}`, error: true })
    }
    input.value = ''
  }

  const first = page ? page.offset : 0
  const last = page ? page.offset + page.lines.length : 0
  return html`<div class="log-view">
    <p class="log-actions">
      <button type="button" onClick=${() => void verify()}>Verify log</button>
      <a href=${api.exportUrl(agent, store)} download="">Export scope (JSON)</a>
      <label class="import">Import scope (JSON file) <input type="file" accept="application/json,.json" onChange=${importFile} /></label>
    </p>
    ${verdict ? html`<p role="status" class=${`verify ${verdict.ok ? 'ok' : 'error'}`}>${verdict.text}</p>` : null}
    <p class=${`status ${status.error ? 'error' : ''}`} role="status">${status.text}</p>
    <h3>JSONL lines of this scope (${page ? page.total.toLocaleString('en-US') : '…'})</h3>
    <p class="pager">
      <button type="button" disabled=${!page || first === 0} onClick=${() => setOffset(Math.max(0, first - LINES_PER_PAGE))}>Older lines</button>
      <span>${page && page.total ? `${(first + 1).toLocaleString('en-US')}–${last.toLocaleString('en-US')} of ${page.total.toLocaleString('en-US')}` : ''}</span>
      <button type="button" disabled=${!page || last >= page.total} onClick=${() => setOffset(last)}>Newer lines</button>
    </p>
    <ol class="log" aria-label="JSONL lines">
      ${(page?.lines ?? []).map(line => html`<li key=${line.line} value=${line.line} class=${verdict?.line === line.line ? 'broken' : ''}>
        <span class="digest" title=${line.digest}>#${line.seq} ${line.type} ${line.recordId} v${line.version} digest ${short(line.digest)} prev ${short(line.prev)}</span>
        <pre>${line.text}</pre>
      </li>`)}
    </ol>
  </div>`
}

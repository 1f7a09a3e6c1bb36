/**
 * The studio at scale (issue 15, "Works at 100,000 records"): fills the playground support
 * agent's log with BENCH_RECORDS records (default 100,000) in BENCH_SCOPES user scopes (default
 * 10, so 10,000 a scope), starts `agent studio`'s server over it (a cold open), and in headless
 * Chromium times the first paint of one scope's Memory view (navigation to its "1–50 of 10,000"
 * pager), then a page change, a filter, and the Log view's newest page. Also times the routes
 * alone. Needs `npm run build` (the studio UI) first. Run with `npx tsx bench/studio.ts`.
 * Prints a table and writes bench/results/studio.json.
 */
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'

const size = Number(process.env.BENCH_RECORDS ?? 100_000)
const scopes = Number(process.env.BENCH_SCOPES ?? 10)
const repo = resolve(import.meta.dirname, '..')
process.env.AGENT_WORKSPACE_DIR = mkdtempSync(join(tmpdir(), 'vam-studio-bench-'))
process.env.SUPPORT_AGENT_DRIVER = 'scripted'
const { createSupportAgent } = await import('../playground/server/lib/support-agent.ts')
const { openMemoryStore } = await import('../src/memory/open-store.ts')
const { startStudioServer } = await import('../src/cli/commands/studio.ts')

const filling = await createSupportAgent({ workspaceDir: process.env.AGENT_WORKSPACE_DIR, driver: 'scripted' })
const stores = await Promise.all(Array.from({ length: scopes }, (_, s) => openMemoryStore(filling, { user: { id: `u${s}` } })))
let start = performance.now()
for (let n = 0; n < size; n++) {
  const opened = stores[n % scopes]!
  await opened.adapter.append(opened.target, { kind: n % 3 ? 'semantic' : 'episodic', content: `note ${n}: the user mentioned topic ${n % 97} ${'lorem ipsum dolor sit amet '.repeat(3)}`, tags: [`t${n % 20}`] }, { audit: { via: 'import' } })
}
const fillMs = performance.now() - start

// A fresh server (a new process would open the log the same way): nothing of the fill is shared.
const { server, url } = await startStudioServer({ root: join(repo, 'playground'), port: 0, users: ['u0'] })
const base = url.replace(/\/studio\/$/, '')
const perScope = Math.ceil(size / scopes)
const rows: [string, number][] = [[`fill ${size.toLocaleString('en-US')} records (${scopes} scopes)`, fillMs]]
const timed = async (label: string, path: string) => {
  start = performance.now()
  const response = await fetch(`${base}${path}`, { headers: { 'x-agent-user': 'u0' } })
  await response.arrayBuffer()
  rows.push([label, performance.now() - start])
}
await timed('route: records table, first page (cold open of the log)', '/agents/support/stores/agent/table?limit=50')
await timed('route: records table, first page (warm)', '/agents/support/stores/agent/table?limit=50')
await timed('route: records table, tag filter', '/agents/support/stores/agent/table?limit=50&tag=t10')
await timed('route: log lines, newest page (first read of the log)', '/agents/support/stores/agent/lines?limit=50')
await timed('route: log lines, newest page (warm)', '/agents/support/stores/agent/lines?limit=50')
await timed('route: ranked search', '/agents/support/stores/agent/search?q=topic%2042')

const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] })
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  await page.goto(url)
  await page.evaluate(() => { localStorage.setItem('vam.user', 'u0'); localStorage.setItem('vam.tab', 'memory') })
  const pager = `1–50 of ${perScope.toLocaleString('en-US')}`
  start = performance.now()
  await page.reload()
  await page.getByText(pager, { exact: true }).waitFor()
  rows.push([`browser: first paint of a ${perScope.toLocaleString('en-US')}-record scope (navigation to its first page)`, performance.now() - start])
  start = performance.now()
  await page.getByRole('button', { name: 'Next page' }).click()
  await page.getByText(`51–100 of ${perScope.toLocaleString('en-US')}`, { exact: true }).waitFor()
  rows.push(['browser: next page', performance.now() - start])
  start = performance.now()
  await page.getByLabel('Tag').selectOption('t10')
  await page.getByText(/^1–50 of [\d,]+$/).waitFor()
  rows.push(['browser: tag filter', performance.now() - start])
  start = performance.now()
  await page.getByRole('tab', { name: 'Log' }).click()
  await page.getByText(new RegExp(`of ${perScope.toLocaleString('en-US')}$`)).first().waitFor()
  rows.push(['browser: log view, newest page', performance.now() - start])
} finally {
  await browser.close()
  server.close()
}

const width = Math.max(...rows.map(([label]) => label.length))
for (const [label, ms] of rows) console.log(`${label.padEnd(width)}  ${ms.toFixed(0).padStart(7)} ms`)
mkdirSync(join(repo, 'bench/results'), { recursive: true })
writeFileSync(join(repo, 'bench/results/studio.json'), `${JSON.stringify({ records: size, scopes, results: Object.fromEntries(rows.map(([label, ms]) => [label, Math.round(ms)])) }, null, 2)}\n`)

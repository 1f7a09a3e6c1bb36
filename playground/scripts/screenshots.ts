// Takes the screenshots of docs/studio.md (`npm run screenshots`, after `npm run build`): `agent
// studio`'s server over the playground's support agent on a temporary workspace, driven in
// Debian's headless Chromium the way a user would: a remembered and approved fact, a question,
// a reload, a pin and an edit through approvals, the version diff, a verified log, and a 390 px screen.
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'

process.env.AGENT_WORKSPACE_DIR = mkdtempSync(join(tmpdir(), 'vam-shots-'))
process.env.SUPPORT_AGENT_DRIVER = 'scripted'
const repo = resolve(import.meta.dirname, '../..')
const { startStudioServer } = await import('../../src/cli/commands/studio.ts')
const { openMemoryStore } = await import('../../src/memory/open-store.ts')
const { createSupportAgent } = await import('../server/lib/support-agent.ts')

// Seed a scope with a few hundred dated records, as an import would.
const seeded = await createSupportAgent({ workspaceDir: process.env.AGENT_WORKSPACE_DIR, driver: 'scripted' })
const opened = await openMemoryStore(seeded, { user: { id: 'ann' } })
const topics = ['flights', 'food', 'billing', 'family', 'work']
for (let n = 0; n < 240; n++) {
  const topic = topics[n % topics.length]!
  await opened.adapter.append(opened.target, { kind: n % 4 === 0 ? 'episodic' : 'semantic', content: `Note ${n} about ${topic}: ann mentioned ${topic} detail number ${n}`, tags: [topic], createdAt: new Date(Date.UTC(2025, 0, 1 + (n % 300))).toISOString(), provenance: { source: 'import' } }, { audit: { via: 'import' } })
}

const { server, url } = await startStudioServer({ root: join(repo, 'playground'), port: 0 })
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] })
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.on('pageerror', error => console.log('[pageerror]', error.message))
  await page.goto(url)
  await page.getByLabel('User').selectOption('ann')
  const say = async (text: string) => {
    await page.getByLabel('Message').fill(text)
    await page.getByRole('button', { name: 'Send' }).click()
  }
  await say('remember I prefer window seats on long flights')
  await page.getByRole('button', { name: 'Approve' }).last().click()
  await page.getByText(/^Saved mem_/).waitFor()
  await say('what seat do I prefer?')
  await page.getByText(/^I found 1 record/).waitFor()
  await page.reload()
  await page.getByText(/^I found 1 record/).waitFor()
  await page.getByText(/^Run timeline/).last().click()
  await page.getByRole('list', { name: 'Conversation' }).evaluate((list) => { list.scrollTop = list.scrollHeight })
  await page.screenshot({ path: join(repo, 'docs/studio/chat.png') })
  console.log('wrote docs/studio/chat.png')

  await page.getByRole('tab', { name: 'Memory' }).click()
  await page.getByText(/^1–50 of 241$/).waitFor()
  await page.getByLabel('Search memory').fill('window seat')
  await page.getByRole('button', { name: 'Search', exact: true }).click()
  await page.getByRole('region', { name: 'Search results' }).getByRole('button').first().click()
  await page.getByRole('button', { name: 'Pin' }).click()
  await page.getByRole('group', { name: /^Approval/ }).getByRole('button', { name: 'Approve' }).click()
  await page.getByRole('button', { name: 'Unpin' }).waitFor()
  await page.getByRole('button', { name: 'Edit' }).click()
  await page.getByLabel('New content').fill('I prefer aisle seats on long flights')
  await page.getByRole('button', { name: 'Save as new version' }).click()
  await page.getByRole('group', { name: /^Approval/ }).last().getByRole('button', { name: 'Approve' }).click()
  const detail = page.getByRole('region', { name: 'Record detail' })
  await detail.getByRole('list', { name: 'Versions' }).getByRole('listitem').nth(2).waitFor()
  // The action runs' tool steps are folded, so the picture shows the record, its cards and its versions.
  await detail.evaluate((element) => { element.querySelectorAll('details.tool-step').forEach(step => step.removeAttribute('open')) })
  await detail.screenshot({ path: join(repo, 'docs/studio/record.png') })
  console.log('wrote docs/studio/record.png')

  await page.getByRole('button', { name: 'Clear' }).click()
  await page.getByLabel('Tag').selectOption('billing')
  await page.getByLabel('Kind').selectOption('episodic')
  await page.getByText(/^1–\d+ of \d+$/).waitFor()
  await page.evaluate(() => window.scrollTo(0, 0))
  await page.screenshot({ path: join(repo, 'docs/studio/memory.png'), clip: { x: 0, y: 0, width: 1280, height: 900 } })
  console.log('wrote docs/studio/memory.png')

  await page.getByRole('tab', { name: 'Log' }).click()
  await page.getByRole('button', { name: 'Verify log' }).click()
  await page.getByText(/^Chain verified/).waitFor()
  await page.screenshot({ path: join(repo, 'docs/studio/log.png'), clip: { x: 0, y: 0, width: 1280, height: 900 } })
  console.log('wrote docs/studio/log.png')

  await page.setViewportSize({ width: 390, height: 844 })
  await page.getByRole('tab', { name: 'Chat' }).click()
  await page.getByText(/Result in/).last().waitFor()
  await page.screenshot({ path: join(repo, 'docs/studio/phone.png') })
  console.log('wrote docs/studio/phone.png')
} finally {
  await browser.close()
  server.close()
}

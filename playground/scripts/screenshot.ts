// Takes docs/playground.png: the playground on a real dev server over a temporary workspace,
// after a remembered and approved fact, a question and a verified log.
// Run: npx tsx playground/scripts/screenshot.ts
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { chromium } from 'playwright-core'
import { createServer } from 'vite'

process.env.AGENT_WORKSPACE_DIR = mkdtempSync(join(tmpdir(), 'vam-shot-'))
process.env.SUPPORT_AGENT_DRIVER = 'scripted'
const repo = resolve(import.meta.dirname, '../..')
const server = await createServer({ root: join(repo, 'playground'), configFile: join(repo, 'playground/vite.config.ts'), logLevel: 'silent', server: { port: 0, host: '127.0.0.1' } })
await server.listen()
const { port } = server.httpServer!.address() as { port: number }
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'] })
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 860 } })
  await page.goto(`http://127.0.0.1:${port}/`)
  await page.getByLabel('Scope').filter({ hasText: '"user"' }).waitFor()
  await page.getByLabel('User').selectOption('ann')
  await page.getByLabel('Scope').filter({ hasText: '"ann"' }).waitFor()
  const say = async (text: string) => { await page.getByLabel('Message').fill(text); await page.getByRole('button', { name: 'Send' }).click() }
  page.on('console', message => console.log('[page]', message.text()))
  page.on('pageerror', error => console.log('[pageerror]', error.message))
  await say('remember I prefer window seats on long flights')
  await page.getByRole('button', { name: 'Approve' }).last().click()
  await page.getByText(/^Saved mem_/).waitFor()
  await say('remember my locker code is 1234')
  await page.getByLabel('Reason').last().fill('do not store codes')
  await page.getByRole('button', { name: 'Deny' }).last().click()
  await page.getByText(/^Not saved/).waitFor()
  await say('what seat do I prefer?')
  await page.getByText(/Result in/).last().waitFor()
  await page.getByRole('list', { name: 'Records' }).getByRole('button').first().click()
  await page.getByRole('button', { name: 'Verify log' }).click()
  await page.getByText(/^Chain verified/).waitFor()
  await page.screenshot({ path: join(repo, 'docs/playground.png'), fullPage: true })
  console.log('wrote docs/playground.png')
} finally {
  await browser.close()
  await server.close()
}

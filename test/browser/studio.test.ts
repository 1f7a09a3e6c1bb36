/**
 * The studio in real Chromium against the real dev server: vitest's browser-mode Vite server
 * mounts the agent plugin (vite.config.ts, project `browser`) over the playground's support
 * agent on a temporary workspace (with a 10,000-record scope for the user `bulk`, see
 * fixture/server/agents/support.ts), and the tests click through the UI the way a user would.
 */
import '../../playground/src/style.css'
import { afterEach, beforeAll, beforeEach, expect, test } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import { mountStudio } from '../../playground/src/studio/app.ts'

let root: HTMLElement
let unmount: (() => void) | undefined

async function mount(): Promise<void> {
  unmount = await mountStudio(root, { base: '/__agents' })
}

// The first request loads the fixture agent, which imports the 10,000-record scope: given its own time.
beforeAll(async () => {
  await fetch('/__agents/agents')
}, 180_000)

beforeEach(async () => {
  localStorage.clear()
  localStorage.setItem('vam.user', 'ann')
  await page.viewport(1280, 900)
  root = document.createElement('div')
  document.body.append(root)
  await mount()
})

afterEach(() => {
  unmount?.()
  root.remove()
})

/** A word no other test writes, so tests sharing the workspace never see each other's records. */
const nonce = () => `n${Math.random().toString(36).slice(2, 10)}`

async function send(text: string) {
  await userEvent.fill(page.getByLabelText('Message'), text)
  await userEvent.click(page.getByRole('button', { name: 'Send' }))
}

const conversation = () => page.getByRole('list', { name: 'Conversation' })
const card = (word: string) => page.getByRole('group', { name: /^Approval apr_/ }).filter({ hasText: word })
const tab = (name: 'Chat' | 'Memory' | 'Log') => userEvent.click(page.getByRole('tab', { name }))

/** Sends `remember <fact>` and approves it with `reason`. */
async function rememberApproved(fact: string, reason = 'ok') {
  await send(`remember ${fact}`)
  await userEvent.fill(card(fact).getByLabelText('Reason'), reason)
  await userEvent.click(card(fact).getByRole('button', { name: 'Approve' }))
  await expect.element(page.getByText(`Approved by ann: ${reason}`).last()).toBeVisible()
  await expect.element(page.getByText(/^Saved mem_/).last()).toBeVisible()
}

test('sending a message shows the memory_search tool step with input, result and duration', async () => {
  const word = nonce()
  await send(`what do you know about ${word}`)
  await expect.element(page.getByText('Tool memory_search').last()).toBeVisible()
  await expect.element(page.getByLabelText('Tool input').last()).toHaveTextContent(word)
  await expect.element(page.getByLabelText('Tool result').last()).toHaveTextContent('"results"')
  await expect.element(page.getByText(/^Result in \d+\.\d ms$/).last()).toBeVisible()
})

test('a reload draws the thread again with its text, tool steps, timings and approval decisions', async () => {
  const word = nonce()
  await rememberApproved(`I prefer window seats ${word}`, 'she said so')
  await send(`what do you know about ${word}`)
  await expect.element(page.getByLabelText('Tool result').last()).toHaveTextContent(word)
  unmount?.()
  await mount()
  await expect.element(conversation().getByText(`ann: remember I prefer window seats ${word}`)).toBeVisible()
  await expect.element(conversation().getByText('Approved by ann: she said so')).toBeVisible()
  const decided = card(`I prefer window seats ${word}`)
  await expect.element(decided).toHaveTextContent('(approved)')
  await expect.element(decided.getByRole('button', { name: 'Approve' })).not.toBeInTheDocument()
  await expect.element(conversation().getByLabelText('Tool input').last()).toHaveTextContent(word)
  await expect.element(conversation().getByText(/^Result in \d+\.\d ms$/).last()).toBeVisible()
  await expect.element(conversation().getByText(/^Run timeline · \d+ ms$/).last()).toBeInTheDocument()
})

test('a reload right after the server accepted a message shows that message (the journal exists before the first event)', async () => {
  const word = nonce()
  await send(`what do you know about ${word}`)
  await expect.element(conversation().getByText(`ann: what do you know about ${word}`)).toBeVisible()
  unmount?.()
  await mount()
  await expect.element(conversation().getByText(`ann: what do you know about ${word}`)).toBeVisible()
  await expect.element(page.getByRole('alert')).not.toBeInTheDocument()
})

test('the thread list keeps earlier threads reachable after "New thread"', async () => {
  const word = nonce()
  await send(`what do you know about first ${word}`)
  await expect.element(page.getByLabelText('Tool result').last()).toBeVisible()
  await userEvent.click(page.getByRole('button', { name: 'New thread' }))
  await expect.element(page.getByLabelText('Current thread')).toHaveTextContent('new thread')
  await send(`what do you know about second ${word}`)
  await expect.element(conversation().getByText(`ann: what do you know about second ${word}`)).toBeVisible()
  const threads = page.getByRole('list', { name: 'Thread list' })
  await expect.element(threads.getByRole('button', { name: `what do you know about second ${word}` })).toBeVisible()
  await userEvent.click(threads.getByRole('button', { name: `what do you know about first ${word}` }))
  await expect.element(conversation().getByText(`ann: what do you know about first ${word}`)).toBeVisible()
  await expect.element(conversation().getByText(`second ${word}`, { exact: false })).not.toBeInTheDocument()
})

test('a pending approval of another thread is not shown in a new thread', async () => {
  const word = nonce()
  await send(`remember my locker is number ${word}`)
  await expect.element(card(word)).toBeVisible()
  await userEvent.click(page.getByRole('button', { name: 'New thread' }))
  await expect.element(page.getByLabelText('Current thread')).toHaveTextContent('new thread')
  await expect.element(card(word)).not.toBeInTheDocument()
  await userEvent.click(page.getByRole('list', { name: 'Thread list' }).getByRole('button', { name: `remember my locker is number ${word}` }))
  await expect.element(card(word).getByRole('button', { name: 'Deny' })).toBeVisible()
})

test('denying a remember writes nothing and the agent says it was not saved', async () => {
  const word = nonce()
  await send(`remember my locker code is ${word}`)
  await userEvent.fill(card(word).getByLabelText('Reason'), 'not true')
  await userEvent.click(card(word).getByRole('button', { name: 'Deny' }))
  await expect.element(page.getByText(/^Denied by ann: not true$/)).toBeVisible()
  await expect.element(page.getByText(/^Not saved/)).toBeVisible()
  const response = await fetch(`/__agents/agents/support/stores/agent/search?q=${word}`, { headers: { 'x-agent-user': 'ann' } })
  expect(((await response.json()) as { hits: unknown[] }).hits).toEqual([])
})

test('a message over 20,000 characters is refused, stays in the input and is not shown as sent', async () => {
  const long = `${'word '.repeat(4001)}end`
  await send(long)
  await expect.element(page.getByRole('status').filter({ hasText: /20000|20,000/ })).toBeVisible()
  expect((page.getByLabelText('Message').element() as HTMLTextAreaElement).value).toBe(long)
  await expect.element(conversation().getByText('word word word', { exact: false })).not.toBeInTheDocument()
})

test('Enter sends the message and the arrow keys move between the views', async () => {
  const word = nonce()
  await userEvent.click(page.getByLabelText('Message'))
  await userEvent.keyboard(`what about ${word}{Enter}`)
  await expect.element(conversation().getByText(`ann: what about ${word}`)).toBeVisible()
  await userEvent.click(page.getByRole('tab', { name: 'Chat' }))
  await userEvent.keyboard('{ArrowRight}')
  await expect.element(page.getByRole('tab', { name: 'Memory' })).toHaveAttribute('aria-selected', 'true')
  expect(document.activeElement?.textContent).toBe('Memory')
  await userEvent.keyboard('{ArrowRight}')
  await expect.element(page.getByRole('tab', { name: 'Log' })).toHaveAttribute('aria-selected', 'true')
})

test('on a 390 px screen nothing scrolls sideways, long words included', async () => {
  await page.viewport(390, 844)
  const word = `x${'y'.repeat(300)}`
  await send(`what do you know about ${word}`)
  await expect.element(page.getByLabelText('Tool result').last()).toBeVisible()
  expect(root.scrollWidth).toBeLessThanOrEqual(390)
  await tab('Memory')
  await expect.element(page.getByLabelText('Current scope')).toHaveTextContent('"user":"ann"')
  expect(root.scrollWidth).toBeLessThanOrEqual(390)
})

test('approving a remember shows the record in the table, its detail with provenance and audit, its JSONL line and a verified chain', async () => {
  const word = nonce()
  await rememberApproved(`I like green tea ${word}`, 'she said so')
  await tab('Memory')
  const table = page.getByRole('table', { name: /^Records/ })
  await userEvent.click(table.getByRole('button', { name: `I like green tea ${word}` }))
  const detail = page.getByRole('region', { name: 'Record detail' })
  await expect.element(detail.getByText('"approver": "ann"')).toBeVisible()
  await expect.element(detail.getByText('"approvalReason": "she said so"')).toBeVisible()
  await expect.element(detail.getByText(/^remember mem_\w+ v1 at/)).toBeVisible()
  await tab('Log')
  await expect.element(page.getByRole('list', { name: 'JSONL lines' }).getByText(word, { exact: false }).first()).toBeVisible()
  await userEvent.click(page.getByRole('button', { name: 'Verify log' }))
  await expect.element(page.getByText(/^Chain verified: [\d,]+ lines?, every digest matches/)).toBeVisible()
})

test('ranked search marks the matched words of each hit', async () => {
  const word = nonce()
  await rememberApproved(`the spare key is under the ${word} pot`)
  await tab('Memory')
  await userEvent.fill(page.getByLabelText('Search memory'), `${word} keys`)
  await userEvent.click(page.getByRole('button', { name: 'Search', exact: true }))
  const results = page.getByRole('region', { name: 'Search results' })
  await expect.element(results.getByText(/^Search results for “.+” \(1\)$/)).toBeVisible()
  await expect.element(results.getByRole('button', { name: `the spare key is under the ${word} pot` })).toBeVisible()
  const marks = Array.from(results.element().querySelectorAll('mark')).map(mark => mark.textContent)
  expect(marks).toEqual(['key', word])
})

test('pin, edit and delete go through an approval card, and the versions show the edit as a diff', async () => {
  const word = nonce()
  await rememberApproved(`my dog is called Rex ${word}`)
  await tab('Memory')
  await userEvent.click(page.getByRole('table', { name: /^Records/ }).getByRole('button', { name: `my dog is called Rex ${word}` }))
  const detail = page.getByRole('region', { name: 'Record detail' })
  const action = detail.getByRole('list', { name: 'Action' })

  await userEvent.click(detail.getByRole('button', { name: 'Pin' }))
  await expect.element(action.getByText('memory_remember needs your approval')).toBeVisible()
  await userEvent.click(action.getByRole('button', { name: 'Approve' }))
  await expect.element(detail.getByRole('button', { name: 'Unpin' })).toBeVisible()
  await expect.element(detail.getByText(/^semantic · pinned$/)).toBeVisible()

  await userEvent.click(detail.getByRole('button', { name: 'Edit' }))
  await userEvent.fill(detail.getByLabelText('New content'), `my dog is called Max ${word}`)
  await userEvent.click(detail.getByRole('button', { name: 'Save as new version' }))
  await userEvent.click(action.getByRole('button', { name: 'Approve' }).last())
  await expect.element(detail.getByText(`my dog is called Max ${word}`, { exact: true }).first()).toBeVisible()
  const versions = detail.getByRole('list', { name: 'Versions' })
  await expect.element(versions.getByRole('listitem')).toHaveLength(3)
  expect(Array.from(versions.element().querySelectorAll('ins')).map(node => node.textContent?.trim())).toEqual(['Max'])
  expect(Array.from(versions.element().querySelectorAll('del')).map(node => node.textContent?.trim())).toEqual(['Rex'])

  await userEvent.fill(detail.getByLabelText('Delete reason'), 'wrong dog')
  await userEvent.click(detail.getByRole('button', { name: 'Delete' }))
  await userEvent.fill(action.getByLabelText('Reason').last(), 'keep it')
  await userEvent.click(action.getByRole('button', { name: 'Deny' }).last())
  await expect.element(action.getByText('Denied by ann: keep it')).toBeVisible()
  await expect.element(detail.getByText(/^active \(version 1\)$/)).toBeVisible()

  await userEvent.click(detail.getByRole('button', { name: 'Delete' }))
  await userEvent.click(action.getByRole('button', { name: 'Approve' }).last())
  await expect.element(detail.getByText(/^deleted \(version 2\), reason: wrong dog$/)).toBeVisible()
})

test('a 10,000-record scope found in the workspace opens at its first page of 50 rows, and filters and paging run on the server', async () => {
  // `bulk` is in no configured user list: the studio finds its scope in the log.
  await expect.element(page.getByLabelText('User').getByRole('option', { name: 'bulk' })).toBeInTheDocument()
  await userEvent.selectOptions(page.getByLabelText('User'), 'bulk')
  await tab('Memory')
  await expect.element(page.getByText('1–50 of 10,000')).toBeVisible()
  const rows = () => page.getByRole('table', { name: /^Records/ }).element().querySelectorAll('tbody tr').length
  expect(rows()).toBe(50)
  await expect.element(page.getByRole('table', { name: /^Records/ }).getByText('bulk record 9999 about topic 49')).toBeVisible()

  await userEvent.click(page.getByRole('button', { name: 'Next page' }))
  await expect.element(page.getByText('51–100 of 10,000')).toBeVisible()
  await expect.element(page.getByRole('table', { name: /^Records/ }).getByText('bulk record 9949 about topic 49')).toBeVisible()

  await userEvent.selectOptions(page.getByLabelText('Tag'), 't3')
  await expect.element(page.getByText('1–50 of 500')).toBeVisible()
  await userEvent.selectOptions(page.getByLabelText('Kind'), 'episodic')
  await expect.element(page.getByText('1–50 of 500')).toBeVisible()
  await userEvent.selectOptions(page.getByLabelText('Kind'), 'semantic')
  await expect.element(page.getByText('No records match.')).toBeVisible()
  await userEvent.click(page.getByRole('button', { name: 'Reset' }))
  await userEvent.fill(page.getByLabelText('Created from'), '2020-01-01')
  await userEvent.fill(page.getByLabelText('Created to'), '2020-01-10')
  await expect.element(page.getByText('1–10 of 10')).toBeVisible()
  expect(rows()).toBe(10)
  await expect.element(page.getByLabelText('Current scope')).toHaveTextContent('"user":"bulk"')
})

test('the log of a 10,000-record scope is paged from its newest lines', async () => {
  localStorage.setItem('vam.user', 'bulk')
  unmount?.()
  await mount()
  await tab('Log')
  await expect.element(page.getByText('9,951–10,000 of 10,000')).toBeVisible()
  expect(page.getByRole('list', { name: 'JSONL lines' }).element().children.length).toBe(50)
  await userEvent.click(page.getByRole('button', { name: 'Older lines' }))
  await expect.element(page.getByText('9,901–9,950 of 10,000')).toBeVisible()
})

test('an exported scope imported into another user\'s scope shows its records there', async () => {
  const word = nonce()
  await rememberApproved(`ann keeps bees ${word}`)
  const exported = await (await fetch('/__agents/agents/support/stores/agent/export', { headers: { 'x-agent-user': 'ann' } })).text()
  await userEvent.selectOptions(page.getByLabelText('User'), 'ben')
  await tab('Log')
  await userEvent.upload(page.getByLabelText('Import scope (JSON file)'), new File([exported], 'ann.json', { type: 'application/json' }))
  await expect.element(page.getByText(/^Imported [\d,]+ records?/)).toBeVisible()
  await tab('Memory')
  await userEvent.fill(page.getByLabelText('Search memory'), word)
  await userEvent.click(page.getByRole('button', { name: 'Search', exact: true }))
  await expect.element(page.getByRole('region', { name: 'Search results' }).getByRole('button', { name: `ann keeps bees ${word}` })).toBeVisible()
})

test('the built studio is served at /__agents/studio/ with its favicon and assets', async () => {
  const index = await fetch('/__agents/studio/')
  expect(index.status).toBe(200)
  const text = await index.text()
  expect(text).toContain('rel="icon"')
  const favicon = await fetch('/__agents/studio/favicon.svg')
  expect(favicon.status).toBe(200)
  expect(favicon.headers.get('content-type')).toBe('image/svg+xml')
  const script = /src="\.\/(assets\/[^"]+\.js)"/.exec(text)![1]!
  const asset = await fetch(`/__agents/studio/${script}`)
  expect(asset.status).toBe(200)
  expect(asset.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
})

test('verify names the line of the log that was edited by hand and marks it in the scope\'s lines', async () => {
  await userEvent.selectOptions(page.getByLabelText('Agent'), 'tampered')
  await tab('Log')
  await expect.element(page.getByText('1–3 of 3')).toBeVisible()
  await userEvent.click(page.getByRole('button', { name: 'Verify log' }))
  await expect.element(page.getByText(/^Chain broken at line 2: /)).toBeVisible()
  const marked = page.getByRole('list', { name: 'JSONL lines' }).element().querySelector('li.broken')
  expect(marked?.getAttribute('value')).toBe('2')
  expect(marked?.textContent).toContain('second fakt')
})

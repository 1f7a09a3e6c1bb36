/**
 * The playground in real Chromium against the real dev server: vitest's browser-mode Vite server
 * mounts the agent plugin (vite.config.ts, project `browser`) over the playground's support
 * agent on a temporary workspace, and the tests click through the UI the way a user would.
 */
import { afterEach, beforeEach, expect, test } from 'vitest'
import { page, userEvent } from 'vitest/browser'
import { mountPlayground } from '../../playground/src/app.ts'

let root: HTMLElement
let unmount: (() => void) | undefined

beforeEach(async () => {
  localStorage.clear()
  root = document.createElement('div')
  document.body.append(root)
  unmount = await mountPlayground(root)
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

function records() {
  return page.getByRole('list', { name: 'Records' })
}

async function records_of(user: string): Promise<string[]> {
  const response = await fetch('/__agents/agents/support/stores/agent/records?status=all', { headers: { 'x-agent-user': user } })
  const page = await response.json() as { records: { content: string }[] }
  return page.records.map(record => record.content)
}

test('sending a message shows the memory_search tool step with input, result and duration', async () => {
  const word = nonce()
  await send(`what do you know about ${word}`)
  await expect.element(page.getByText('Tool memory_search').last()).toBeVisible()
  await expect.element(page.getByLabelText('Tool input').last()).toHaveTextContent(word)
  await expect.element(page.getByLabelText('Tool result').last()).toHaveTextContent('"results"')
  await expect.element(page.getByText(/^Result in \d+\.\d ms$/).last()).toBeVisible()
})

test('approving a remember writes the record, which appears in the inspector with its JSONL line and a verified chain', async () => {
  const word = nonce()
  await send(`remember I prefer window seats ${word}`)
  const card = page.getByRole('group', { name: /^Approval apr_/ }).filter({ hasText: word })
  await expect.element(card).toBeVisible()
  await userEvent.fill(card.getByLabelText('Reason'), 'she said so')
  await userEvent.click(card.getByRole('button', { name: 'Approve' }))
  await expect.element(page.getByText(/^Approved by ann: she said so$/)).toBeVisible()
  await expect.element(page.getByText(/^Saved mem_/)).toBeVisible()
  await expect.element(records().getByText(`I prefer window seats ${word}`)).toBeVisible()
  await expect.element(page.getByRole('list', { name: 'JSONL lines' }).getByText(word, { exact: false }).first()).toBeVisible()

  await userEvent.click(records().getByText(`I prefer window seats ${word}`))
  const detail = page.getByRole('region', { name: 'Record detail' })
  await expect.element(detail.getByText('"approver": "ann"')).toBeVisible()
  await expect.element(detail.getByText(/remember v1 at/)).toBeVisible()

  await userEvent.click(page.getByRole('button', { name: 'Verify log' }))
  await expect.element(page.getByText(/^Chain verified: \d+ lines?, every digest matches/)).toBeVisible()
  expect(await records_of('ann')).toContain(`I prefer window seats ${word}`)
})

test('denying a remember writes nothing and the agent says it was not saved', async () => {
  const word = nonce()
  await send(`remember my locker code is ${word}`)
  const card = page.getByRole('group', { name: /^Approval apr_/ }).filter({ hasText: word })
  await userEvent.fill(card.getByLabelText('Reason'), 'not true')
  await userEvent.click(card.getByRole('button', { name: 'Deny' }))
  await expect.element(page.getByText(/^Denied by ann: not true$/)).toBeVisible()
  await expect.element(page.getByText(/^Not saved/)).toBeVisible()
  await expect.element(records().getByText(word, { exact: false })).not.toBeInTheDocument()
  expect((await records_of('ann')).some(content => content.includes(word))).toBe(false)
})

test('switching user hides the other user\'s records, and switching back shows them', async () => {
  const word = nonce()
  await send(`remember ann owns a red bike ${word}`)
  const card = page.getByRole('group', { name: /^Approval apr_/ }).filter({ hasText: word })
  await userEvent.click(card.getByRole('button', { name: 'Approve' }))
  await expect.element(records().getByText(`ann owns a red bike ${word}`)).toBeVisible()

  await userEvent.selectOptions(page.getByLabelText('User'), 'ben')
  await expect.element(page.getByLabelText('Scope')).toHaveTextContent('"user":"ben"')
  await expect.element(records().getByText(word, { exact: false })).not.toBeInTheDocument()
  expect((await records_of('ben')).some(content => content.includes(word))).toBe(false)
  // Ben searching for Ann's word finds nothing either.
  await userEvent.fill(page.getByLabelText('Search memory'), word)
  await userEvent.click(page.getByRole('button', { name: 'Search' }))
  await expect.element(page.getByText('Nothing found.')).toBeVisible()

  await userEvent.selectOptions(page.getByLabelText('User'), 'ann')
  await expect.element(records().getByText(`ann owns a red bike ${word}`)).toBeVisible()
})

test('the search box finds a record by a word of it', async () => {
  const word = nonce()
  await send(`remember the spare key is under the ${word} pot`)
  const card = page.getByRole('group', { name: /^Approval apr_/ }).filter({ hasText: word })
  await userEvent.click(card.getByRole('button', { name: 'Approve' }))
  await expect.element(records().getByText(`the spare key is under the ${word} pot`)).toBeVisible()
  await userEvent.fill(page.getByLabelText('Search memory'), word)
  await userEvent.click(page.getByRole('button', { name: 'Search' }))
  await expect.element(page.getByText(/^Search results for “.+” \(1\)$/)).toBeVisible()
  await expect.element(records().getByText(`the spare key is under the ${word} pot`)).toBeVisible()
})

test('the conversation keeps the newest reply in view as it grows', async () => {
  const word = nonce()
  const conversation = page.getByRole('list', { name: 'Conversation' }).element() as HTMLElement
  // The test page has no stylesheet: give the list the fixed height the playground's CSS gives it.
  Object.assign(conversation.style, { maxHeight: '240px', overflowY: 'auto' })
  for (let n = 0; n < 6; n++) await send(`what do you know about ${word} ${n}`)
  await expect.element(page.getByLabelText('Tool result').nth(5)).toBeVisible()
  await expect.poll(() => conversation.scrollHeight > conversation.clientHeight).toBe(true)
  await expect.poll(() => conversation.scrollHeight - conversation.scrollTop - conversation.clientHeight).toBeLessThan(2)
})

test('a reload shows the earlier turns of the continuing thread', async () => {
  const word = nonce()
  await send(`what do you know about ${word}`)
  await expect.element(page.getByLabelText('Tool result').last()).toBeVisible()
  unmount?.()
  unmount = await mountPlayground(root)
  const conversation = page.getByRole('list', { name: 'Conversation' })
  await expect.element(conversation.getByText(`what do you know about ${word}`)).toBeVisible()
})

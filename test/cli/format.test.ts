import { describe, expect, it } from 'vitest'
import { formatApprovalPrompt, formatError, formatEvent, formatJson, parseApprovalAnswer } from '../../src/cli/format.ts'
import type { ApprovalRequest } from '../../src/agent/types.ts'
import { describeDriver } from '../../src/cli/info.ts'
import { scriptedModel } from '../../src/testing/index.ts'

const approval: ApprovalRequest = {
  id: 'apr_1', agent: 'support', runId: 'run_1', threadId: 'thr_1', toolName: 'memory_remember', toolCallId: 'call_1',
  input: { content: 'likes tea', kind: 'semantic' }, reason: 'memory_remember requires approval', createdAt: '2024-01-01T00:00:00.000Z', status: 'pending',
}

describe('cli output format', () => {
  it('a tool call prints as [tool] name {input}', () => {
    expect(formatEvent({ type: 'tool-call', toolCallId: 'c1', toolName: 'memory_search', input: { query: 'tea' } })).toBe('[tool] memory_search {"query":"tea"}')
  })

  it('a tool result prints as [result] {output}', () => {
    expect(formatEvent({ type: 'tool-result', toolCallId: 'c1', toolName: 'memory_search', output: { results: [] }, durationMs: 3 })).toBe('[result] {"results":[]}')
  })

  it('a tool error prints as [error] CODE: message', () => {
    const error = { code: 'MEMORY_RECORD_NOT_FOUND', message: 'MEMORY_RECORD_NOT_FOUND: no record "x". Fix: use an id from memory_search', why: 'no record "x"', fix: 'use an id from memory_search' }
    expect(formatEvent({ type: 'tool-error', toolCallId: 'c1', toolName: 'memory_read', error, durationMs: 1 })).toBe('[error] MEMORY_RECORD_NOT_FOUND: no record "x". Fix: use an id from memory_search')
  })

  it('an error whose message lacks its code gets the code prefixed', () => {
    expect(formatError({ code: 'E_X', message: 'broke', why: 'broke', fix: 'retry' })).toBe('E_X: broke')
  })

  it('text deltas and start events print nothing on their own line', () => {
    expect(formatEvent({ type: 'text-delta', text: 'hi' })).toBeUndefined()
    expect(formatEvent({ type: 'start', runId: 'r', threadId: 't', agent: 'a' })).toBeUndefined()
  })

  it('an approval decision names the approver and reason', () => {
    expect(formatEvent({ type: 'approval-decision', approvalId: 'apr_1', toolCallId: 'c', approved: false, reason: 'not true', approver: 'demo' })).toBe('[approval] denied by demo: not true')
  })

  it('the approval prompt shows the tool, its exact input and asks y/N with a reason', () => {
    expect(formatApprovalPrompt(approval)).toBe('Approve memory_remember {"content":"likes tea","kind":"semantic"}? [y/N, then an optional reason] ')
  })

  it('long JSON is cut at the limit with a count of the characters left out', () => {
    const text = formatJson({ content: 'x'.repeat(100) }, 20)
    expect(text).toBe(`${JSON.stringify({ content: 'x'.repeat(100) }).slice(0, 20)}… (94 more characters)`)
    expect(formatJson({ content: 'x'.repeat(100) }, 0)).toHaveLength(114)
  })
})

describe('approval answers', () => {
  it('y and yes approve, with the rest of the line as reason', () => {
    expect(parseApprovalAnswer('y')).toEqual({ approved: true, reason: undefined })
    expect(parseApprovalAnswer('YES  looks right')).toEqual({ approved: true, reason: 'looks right' })
  })

  it('n, an empty line and anything else deny', () => {
    expect(parseApprovalAnswer('n not true')).toEqual({ approved: false, reason: 'not true' })
    expect(parseApprovalAnswer('')).toEqual({ approved: false, reason: undefined })
    expect(parseApprovalAnswer('maybe later')).toEqual({ approved: false, reason: 'maybe later' })
  })
})

describe('describeDriver', () => {
  it('names each driver kind: model with provider and id, custom-run, provider-backed over the MCP bridge', () => {
    expect(describeDriver({ run() {} })).toBe('custom-run')
    expect(describeDriver({ provider: { name: 'coder', run() {} } })).toBe('provider-backed coder (MCP bridge)')
    expect(describeDriver({ model: scriptedModel([]) })).toBe('model scripted/scripted-model')
  })
})

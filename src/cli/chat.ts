import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import { runAgent } from '../agent/run.ts'
import { listApprovals, resolveApproval } from '../agent/approvals.ts'
import { toErrorShape } from '../errors.ts'
import type { AgentDefinition, AgentRun, AgentRunResult, AgentUser, ApprovalRequest } from '../agent/types.ts'
import { DEFAULT_JSON_LIMIT, formatApprovalLine, formatApprovalPrompt, formatError, formatEvent, parseApprovalAnswer } from './format.ts'

/** Options of {@link runChat}. */
export interface ChatOptions {
  agent: AgentDefinition
  user: AgentUser
  /** Thread to continue; default: the thread the first run creates. */
  threadId?: string
  /** Lines of user input (stdin). Works with a TTY and with piped text. */
  input: Readable
  /** Where the conversation is printed (stdout). */
  output: Writable
  /** True for a terminal: print a `> ` prompt. Otherwise each line read is echoed as `> line`, so logs show the conversation. */
  interactive: boolean
  /** Recorded as the approver of decisions. Default: the user id. */
  approver?: string
  /** Longest JSON shown for tool inputs and results; `0` shows everything. Default {@link DEFAULT_JSON_LIMIT}. */
  jsonLimit?: number
}

/** Chat commands typed at the prompt. */
const HELP = 'commands: /approvals (your pending approvals), /approve <id> [reason], /deny <id> [reason], /exit (quit), /help'

/** Pulls lines one at a time from a stream; `undefined` at end of input. */
function lineReader(input: Readable): { next(): Promise<string | undefined>; close(): void } {
  const lines = createInterface({ input, crlfDelay: Infinity, terminal: false })
  const iterator = lines[Symbol.asyncIterator]()
  return {
    async next() {
      const step = await iterator.next()
      return step.done ? undefined : step.value
    },
    close: () => lines.close(),
  }
}

/**
 * A terminal chat with one agent on one thread (source: capability document, "Verify memory":
 * `agent dev` shows each tool step). Each input line is one `runAgent` invocation; text deltas
 * are printed as they stream, tool steps as `[tool] name {input}` then `[result] {...}` or
 * `[error] CODE: ...`, and every approval request is asked inline (`[y/N] reason:`, answered by the
 * next input line) and passed to `resolveApproval`, whose continued events are printed too.
 * Returns at end of input or on `/exit`; a failing run is printed, never thrown.
 */
export async function runChat(options: ChatOptions): Promise<void> {
  const { agent, user, output, interactive } = options
  const approver = options.approver ?? user.id
  const limit = options.jsonLimit ?? DEFAULT_JSON_LIMIT
  const reader = lineReader(options.input)
  let threadId = options.threadId
  let atLineStart = true

  const write = (text: string) => {
    if (text.length === 0) return
    output.write(text)
    atLineStart = text.endsWith('\n')
  }
  const line = (text: string) => write(`${atLineStart ? '' : '\n'}${text}\n`)
  const ask = async (prompt: string): Promise<string | undefined> => {
    write(`${atLineStart ? '' : '\n'}${prompt}`)
    const answer = await reader.next()
    if (!interactive) write(`${answer ?? ''}\n`)
    else atLineStart = true
    return answer
  }

  /** Prints a run's events and returns its result. */
  const follow = async (run: AgentRun): Promise<AgentRunResult> => {
    try {
      for await (const event of run) {
        // The thread id is known for sure once `start` is out (a continued run learns it from its approval).
        if (event.type === 'start' && event.threadId) threadId = event.threadId
        if (event.type === 'text-delta') write(event.text)
        else {
          const text = formatEvent(event, limit)
          if (text !== undefined) line(text)
        }
      }
    } catch (error) {
      line(`[error] ${formatError(toErrorShape(error))}`)
    }
    const result = await run.result.catch((error: unknown): AgentRunResult => ({ runId: run.runId, threadId: run.threadId, status: 'failed', text: '', approvals: [], error: toErrorShape(error) }))
    if (result.threadId) threadId = result.threadId
    if (!atLineStart) write('\n')
    return result
  }

  /** Asks about every pending approval of a result, continuing the run after each decision. */
  const settleApprovals = async (result: AgentRunResult): Promise<boolean> => {
    const asked = new Set<string>()
    let pending: ApprovalRequest[] = result.approvals.filter(approval => approval.status === 'pending')
    while (pending.length > 0) {
      const approval = pending[0]!
      asked.add(approval.id)
      let answer = await ask(formatApprovalPrompt(approval, limit))
      // A command typed at the question (say /approvals) is not an answer: say so and ask again.
      while (answer !== undefined && answer.trim().startsWith('/')) {
        line('answer y or n (then an optional reason); commands work after the approval is answered')
        answer = await ask(formatApprovalPrompt(approval, limit))
      }
      if (answer === undefined) {
        line(`approval ${approval.id} left pending (end of input); answer it later with /approve ${approval.id} or /deny ${approval.id}`)
        return false
      }
      const decision = parseApprovalAnswer(answer)
      try {
        const continued = await resolveApproval(agent, approval.id, { approved: decision.approved, reason: decision.reason, approver, threadId: approval.threadId, user })
        const next = await follow(continued)
        pending = next.approvals.filter(candidate => candidate.status === 'pending' && !asked.has(candidate.id))
      } catch (error) {
        line(`[error] ${formatError(toErrorShape(error))}`)
        pending = pending.slice(1)
      }
    }
    return true
  }

  const showApprovals = async () => {
    // Only this user's approvals: the workspace holds every user's requests.
    const approvals = await listApprovals(agent, { status: 'pending', user })
    if (approvals.length === 0) line('no pending approvals')
    for (const approval of approvals) line(formatApprovalLine(approval, limit))
  }

  try {
    for (;;) {
      if (interactive) write('> ')
      const text = await reader.next()
      if (text === undefined) break
      if (!interactive) write(`> ${text}\n`)
      else atLineStart = true
      const command = text.trim()
      if (command === '') continue
      if (command === '/exit' || command === '/quit') break
      if (command === '/approvals') {
        await showApprovals().catch((error: unknown) => line(`[error] ${formatError(toErrorShape(error))}`))
        continue
      }
      const decision = /^\/(approve|deny)\s+(\S+)(?:\s+(.+))?$/.exec(command)
      if (decision) {
        // Answers an approval left pending earlier (in this session or another one) by this user.
        const [, verb, approvalId, reason] = decision
        const result = await follow(resolveApproval(agent, approvalId!, { approved: verb === 'approve', ...(reason ? { reason } : {}), approver, user }))
        if (result.status === 'awaiting-approval' && !(await settleApprovals(result))) break
        continue
      }
      if (command === '/help' || command.startsWith('/')) {
        line(HELP)
        continue
      }
      let run: AgentRun
      try {
        run = runAgent(agent, { input: text, threadId, user })
      } catch (error) {
        line(`[error] ${formatError(toErrorShape(error))}`)
        continue
      }
      const result = await follow(run)
      if (result.status === 'awaiting-approval' && !(await settleApprovals(result))) break
    }
  } finally {
    reader.close()
  }
}

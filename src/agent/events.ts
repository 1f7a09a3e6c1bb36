import { toErrorShape, type AgentErrorShape } from '../errors.ts'
import type { AgentRun, AgentRunEvent, AgentRunResult, ApprovalRequest } from './types.ts'

/** Emits one event of the run being driven. */
export type Emit = (event: AgentRunEvent) => void

/** What a run body returns; the host adds the ids and the collected text and emits `error` for `error`. */
export interface RunOutcome {
  status: AgentRunResult['status']
  approvals: ApprovalRequest[]
  error?: AgentErrorShape
}

/** Ids of a run; `threadId` may be learnt while the body runs (resolveApproval loads it). */
export interface RunIds {
  runId: string
  threadId: string
}

/**
 * Starts `body` and returns the {@link AgentRun} around it.
 *
 * Events are buffered from the first one, so a consumer that only awaits `result` still lets the
 * run finish, and a consumer that starts iterating late still receives every event. `result`
 * never rejects: a throw from `body` becomes an `error` event and status `'failed'`. Emits
 * `finish` last, always.
 */
export function startRun(ids: RunIds, body: (emit: Emit, ids: RunIds) => Promise<RunOutcome>): AgentRun {
  const buffer: AgentRunEvent[] = []
  let closed = false
  let wake: (() => void) | undefined
  let iterated = false
  let text = ''

  const emit: Emit = (event) => {
    if (closed) return
    if (event.type === 'text-delta') text += event.text
    buffer.push(event)
    wake?.()
  }

  const result = (async (): Promise<AgentRunResult> => {
    // Let the caller attach listeners before the first event (runAgent returns synchronously).
    await Promise.resolve()
    let outcome: RunOutcome
    try {
      outcome = await body(emit, ids)
    }
    catch (error) {
      outcome = { status: 'failed', approvals: [], error: toErrorShape(error) }
    }
    if (outcome.error) emit({ type: 'error', error: outcome.error })
    emit({ type: 'finish', status: outcome.status, text })
    closed = true
    wake?.()
    return { runId: ids.runId, threadId: ids.threadId, status: outcome.status, text, approvals: outcome.approvals, ...(outcome.error ? { error: outcome.error } : {}) }
  })()

  async function* iterate(): AsyncGenerator<AgentRunEvent> {
    let index = 0
    while (true) {
      if (index < buffer.length) {
        yield buffer[index++]!
        continue
      }
      if (closed) return
      await new Promise<void>((resolve) => { wake = resolve })
      wake = undefined
    }
  }

  return {
    get runId() { return ids.runId },
    get threadId() { return ids.threadId },
    result,
    [Symbol.asyncIterator]() {
      if (iterated) throw new TypeError('an AgentRun can be iterated once; await `result` for the outcome')
      iterated = true
      return iterate()
    },
  }
}

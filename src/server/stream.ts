import type { AgentRun, AgentRunEvent } from '../agent/types.ts'
import { publicErrorShape, publicEvent, type RoutesMode } from './public-error.ts'

/** Media type of the NDJSON run stream: one `AgentRunEvent` JSON object per line. */
export const NDJSON_TYPE = 'application/x-ndjson'

/**
 * Streams the events of a run as a web `Response`: NDJSON by default (one event per line), or
 * server-sent events (`event: <type>`, `data: <json>`) when the request accepts
 * `text/event-stream`. The run keeps going when the client goes away (its buffered events are
 * dropped), so an approval or a write in flight is never cut in half by a closed tab. In
 * production (`mode`), an internal error's message is left out of its event (public-error.ts).
 */
export function runResponse(run: AgentRun, accept: string | null, status = 200, started?: { events: AgentRunEvent[]; iterator: AsyncIterator<AgentRunEvent> }, mode: RoutesMode = 'production'): Response {
  const sse = !!accept && accept.includes('text/event-stream')
  const encoder = new TextEncoder()
  const encode = (raw: AgentRunEvent) => {
    const event = publicEvent(raw, mode)
    return encoder.encode(sse ? `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n` : `${JSON.stringify(event)}\n`)
  }
  // `started`: the caller already read these events from this iterator (they are sent first).
  const iterator = started?.iterator ?? run[Symbol.asyncIterator]()
  const buffered = [...(started?.events ?? [])]
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (buffered.length) {
        controller.enqueue(encode(buffered.shift()!))
        return
      }
      try {
        const step = await iterator.next()
        if (step.done) controller.close()
        else controller.enqueue(encode(step.value))
      } catch (error) {
        controller.enqueue(encode({ type: 'error', error: publicErrorShape(error, mode) }))
        controller.close()
      }
    },
  })
  return new Response(body, {
    status,
    headers: {
      'content-type': sse ? 'text/event-stream; charset=utf-8' : `${NDJSON_TYPE}; charset=utf-8`,
      'cache-control': 'no-store',
      'x-agent-run-id': run.runId,
    },
  })
}

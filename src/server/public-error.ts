/**
 * What a client of the agent routes is told of an error. An AgentError is shown as it is (its why
 * and fix are written for the caller), except in production those that quote another error's
 * message ({@link QUOTING_CODES}: a driver's, a model provider's, a hook's). Any other error is
 * `INTERNAL_ERROR`. In dev every message is shown; in production a quoted message (it may hold a
 * token or a connection string) goes to the server's log (`console.error`) instead, and the
 * client gets the code with a generic why.
 */
import type { AgentRunEvent } from '../agent/types.ts'
import { isAgentError, toErrorShape, type AgentErrorShape } from '../errors.ts'

/** Whether the routes serve the dev playground (details shown) or production (details logged). */
export type RoutesMode = 'dev' | 'production'

const HIDDEN_WHY = 'the server failed; its log has the error'

/** Codes whose why quotes the message of an error from outside this package. */
const QUOTING_CODES: ReadonlySet<string> = new Set(['INTERNAL_ERROR', 'DRIVER_FAILED', 'MODEL_ERROR', 'CAPABILITY_PROMPT_FAILED', 'CAPABILITY_FINISH_FAILED', 'CAPABILITY_RESOLVE_FAILED', 'TOOL_POLICY_FAILED'])

function hidden(code: string): AgentErrorShape {
  return { code, message: `${code}: ${HIDDEN_WHY}`, why: HIDDEN_WHY, fix: 'retry later, or ask the operator to read the server log' }
}

/** `shape` as a client gets it in `mode` (`what` names it in the server's log). */
function publicShape(shape: AgentErrorShape, mode: RoutesMode, what: string, original: unknown): AgentErrorShape {
  if (mode === 'dev' || !QUOTING_CODES.has(shape.code)) return shape
  console.error(`agent routes: ${what}:`, original)
  return hidden(shape.code)
}

/** The shape of a thrown `error` a client gets in `mode`. */
export function publicErrorShape(error: unknown, mode: RoutesMode): AgentErrorShape {
  return publicShape(toErrorShape(error), mode, 'internal error', isAgentError(error) ? error.message : error)
}

/** `event` as a client gets it in `mode`: in production, an `error` or `tool-error` event of a quoting code loses its message (logged instead). */
export function publicEvent<E extends AgentRunEvent>(event: E, mode: RoutesMode): E {
  if (event.type !== 'error' && event.type !== 'tool-error') return event
  const shape = publicShape(event.error, mode, `a run's ${event.type} event`, event.error.message)
  return shape === event.error ? event : { ...event, error: shape }
}

/**
 * Errors as values: every error this package raises has a stable `code`, a `why` (what went
 * wrong, in words a developer or a model can act on) and a `fix` (what to do instead).
 *
 * The message is rendered as `CODE: why. Fix: fix` so that it reads well in a stack trace, in a
 * CLI and in a tool result given to a model.
 */
export class AgentError extends Error {
  /** Stable machine-readable code, for example `MEMORY_SCOPE_REQUIRED`. */
  readonly code: string
  /** Why the operation failed. */
  readonly why: string
  /** What the caller (developer or model) should do instead. */
  readonly fix: string
  /** Structured details safe to show to the caller (never secrets). */
  readonly details?: Record<string, unknown>

  constructor(code: string, why: string, fix: string, details?: Record<string, unknown>, options?: { cause?: unknown }) {
    super(`${code}: ${why}. Fix: ${fix}`, options)
    this.name = 'AgentError'
    this.code = code
    this.why = why
    this.fix = fix
    if (details) this.details = details
  }

  /** Plain JSON shape used in tool-error results, events and HTTP answers. */
  toJSON(): AgentErrorShape {
    return { code: this.code, message: this.message, why: this.why, fix: this.fix, ...(this.details ? { details: this.details } : {}) }
  }
}

/** The JSON form of an {@link AgentError}. */
export interface AgentErrorShape {
  code: string
  message: string
  why: string
  fix: string
  details?: Record<string, unknown>
}

/** Creates an {@link AgentError}; `why` and `fix` are sentences without a final period. */
export function agentError(code: string, why: string, fix: string, details?: Record<string, unknown>, cause?: unknown): AgentError {
  return new AgentError(code, why, fix, details, cause === undefined ? undefined : { cause })
}

/**
 * What a wrapping error says of the thrown value `error` it wraps: an {@link AgentError}'s code and
 * `why`, with its `fix` apart (so that the wrapper's message has one `Fix:`, the inner one when
 * there is one), else the value's message and no fix.
 */
export function causeOf(error: unknown): { text: string; fix?: string } {
  if (isAgentError(error)) return { text: `${error.code}: ${error.why}`, fix: error.fix }
  return { text: error instanceof Error ? error.message : String(error) }
}

/** True when `value` is an {@link AgentError} (also across module copies, by shape). */
export function isAgentError(value: unknown): value is AgentError {
  return value instanceof AgentError || (value instanceof Error && typeof (value as { code?: unknown }).code === 'string' && typeof (value as { fix?: unknown }).fix === 'string')
}

/**
 * Normalizes anything thrown into an {@link AgentErrorShape}. Unknown errors become
 * `INTERNAL_ERROR` with their message, so a tool failure never crashes a run.
 */
export function toErrorShape(error: unknown): AgentErrorShape {
  if (isAgentError(error)) return error.toJSON()
  const message = error instanceof Error ? error.message : String(error)
  return { code: 'INTERNAL_ERROR', message: `INTERNAL_ERROR: ${message}`, why: message, fix: 'report this error with the steps that led to it' }
}

import type { H3Event } from 'h3'
import type { AgentDefinition, AgentUser } from '../agent/types.ts'

/**
 * The verified identity of a request: who the agent runs for and whose memory scope the
 * inspector shows. `id` is required; `tenant`, `name` and any other claim pass through to the
 * agent's scope functions as `user`: `identify(event)` returns the verified identity (user,
 * tenant, ...), the only source of scope values.
 */
export type AgentIdentity = AgentUser

/**
 * Returns the verified identity of a request, or `undefined` when there is none. Throwing an
 * `AgentError` (for example `AUTH_TOKEN_INVALID`) refuses the request with that code; both
 * answers are HTTP 401. Scope values come only from this identity and the agent's configuration,
 * never from the request body or the model.
 */
export type IdentifyHook = (event: H3Event) => AgentIdentity | undefined | Promise<AgentIdentity | undefined>

/**
 * Where the routes find agents: `list()` gives the names served, `load(name)` the definition
 * (`undefined` for an unknown name). The Vite plugin loads through Vite's module graph; the
 * production handler from a record of definitions.
 */
export interface AgentSource {
  list(): Promise<string[]>
  load(name: string): Promise<AgentDefinition | undefined>
}

/** Options of {@link createAgentRoutes} (the h3 app shared by the dev plugin and the production handler). */
export interface AgentRoutesOptions {
  agents: AgentSource
  /** Required: every route, including unknown ones under `prefix`, first asks it for an identity. */
  identify: IdentifyHook
  /** Path prefix of every route, without a trailing slash. Default `'/__agents'`. */
  prefix?: string
  /** `'dev'` adds `GET <prefix>/users` (the playground's user list). Default `'production'`. */
  mode?: 'dev' | 'production'
  /** Most bytes of a request body; larger ones get 413 `REQUEST_TOO_LARGE`. Default 262,144 (256 KiB). */
  maxBodyBytes?: number
  /** Users the dev user picker offers (only with `mode: 'dev'`). */
  devUsers?: readonly string[]
  /**
   * Serves the studio (UI at `<prefix>/studio/`, its routes, and the run journal behind the
   * thread timeline; docs/studio.md). `dir`: folder of the built UI, default this package's
   * `dist/studio`. Default off; the Vite plugin and `agent studio` turn it on.
   */
  studio?: boolean | { dir?: string }
}

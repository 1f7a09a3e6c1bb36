/**
 * `vite-agent-memory/server`: the agent routes as an h3 v2 handler for production, with a
 * required `identify(event)` hook, and `jwtIdentity({ secret | jwks })`. See
 * docs/playground-and-server.md.
 */
export { createAgentHandler, DEFAULT_HANDLER_PREFIX } from './handler.ts'
export type { AgentHandlerOptions } from './handler.ts'
export { jwtIdentity } from './jwt.ts'
export type { JwtIdentityOptions } from './jwt.ts'
export { createAgentRoutes, DEFAULT_AGENTS_PREFIX, MAX_RUN_INPUT } from './routes.ts'
export { NDJSON_TYPE } from './stream.ts'
export type { AgentIdentity, AgentRoutesOptions, AgentSource, IdentifyHook } from './types.ts'
export type { InspectorLogLine, InspectorStore, RecordDetail, RecordPage, ScopeExport, StoreLogVerification } from './inspector.ts'
export type { JournalEvent, JournalRun, JournalRunKind, ThreadJournal, ThreadSummary } from './studio-journal.ts'
export type { RecordTablePage } from './studio-routes.ts'
export type { StudioAction } from './studio-actions.ts'

/**
 * vite-agent-memory host API: define agents and capabilities, run them, resolve approvals, and
 * create the workspace they persist into.
 */
export { defineAgent, defineCapability } from './agent/define.ts'
export { runAgent } from './agent/run.ts'
export { resolveApproval, listApprovals } from './agent/approvals.ts'
export { readThread, messageText } from './agent/threads.ts'
export type { ThreadView } from './agent/threads.ts'
export { createWorkspace } from './workspace/workspace.ts'
export { AgentError, agentError, isAgentError } from './errors.ts'
export type { AgentErrorShape } from './errors.ts'
export type * from './agent/types.ts'
export type { Workspace, WorkspaceOptions } from './workspace/types.ts'

/**
 * `vite-agent-memory/vite`: the Vite plugin that serves agents, approvals and the memory
 * inspector under `/__agents` in `vite dev`. See docs/playground-and-server.md.
 */
export { agentMemory, createDevMiddleware, devIdentity, viteAgentSource, DEFAULT_DEV_USERS } from './plugin.ts'
export type { AgentMemoryPluginOptions, DevIdentityOptions, DevMiddleware } from './plugin.ts'

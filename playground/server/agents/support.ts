/**
 * The playground `support` agent (`npm run dev`).
 *
 * - Memory: one store `agent` kept in the workspace JSONL log, scoped per user
 *   (`{ agent: 'support', user: <user id> }`; no user switches memory off), with tool writes that
 *   wait for approval.
 * - Driver: with `OPENAI_API_KEY` or `ANTHROPIC_API_KEY` set and the matching provider package
 *   installed (`npm i @ai-sdk/openai` or `npm i @ai-sdk/anthropic`), the model; otherwise a
 *   deterministic driver (../lib/support-driver.ts) so everything works with no key.
 *   `SUPPORT_AGENT_DRIVER=scripted` forces the deterministic driver.
 * - Workspace: `AGENT_WORKSPACE_DIR`, else `playground/.agent/workspace`.
 */
import { fileURLToPath } from 'node:url'
import { createSupportAgent } from '../lib/support-agent.ts'

const workspaceDir = process.env.AGENT_WORKSPACE_DIR || fileURLToPath(new URL('../../.agent/workspace', import.meta.url))

export default await createSupportAgent({ workspaceDir })

/**
 * The playground `support` agent as a factory, so that tests (and the browser tests' dev server)
 * can build the very same agent over a temporary workspace. See ../agents/support.ts.
 */
import type { LanguageModel } from 'ai'
import { createWorkspace, defineAgent } from '../../../src/index.ts'
import type { AgentDefinition, AgentDriver } from '../../../src/index.ts'
import { localEmbedderIfInstalled, memory, workspaceJsonlMemoryStore } from '../../../src/capabilities/index.ts'
import { supportDriver } from './support-driver.ts'

/** Provider packages tried, in order, when their API key is set. They are not dependencies of this package. */
const PROVIDERS = [
  { key: 'OPENAI_API_KEY', module: '@ai-sdk/openai', factory: 'openai', modelEnv: 'OPENAI_MODEL', model: 'gpt-4o-mini' },
  { key: 'ANTHROPIC_API_KEY', module: '@ai-sdk/anthropic', factory: 'anthropic', modelEnv: 'ANTHROPIC_MODEL', model: 'claude-3-5-haiku-latest' },
] as const

/** The model of the first provider whose key is set and whose package is installed, else `undefined`. */
async function providerModel(): Promise<LanguageModel | undefined> {
  if (process.env.SUPPORT_AGENT_DRIVER === 'scripted') return undefined
  for (const provider of PROVIDERS) {
    if (!process.env[provider.key]) continue
    try {
      const specifier: string = provider.module
      const loaded = (await import(/* @vite-ignore */ specifier)) as Record<string, unknown>
      const create = loaded[provider.factory]
      if (typeof create === 'function') return (create as (modelId: string) => LanguageModel)(process.env[provider.modelEnv] || provider.model)
    } catch {
      // Package not installed: fall through to the next provider, then to the scripted driver.
    }
  }
  return undefined
}

/** Options of {@link createSupportAgent}. */
export interface SupportAgentOptions {
  /** Folder of the agent workspace (memory log, approvals, threads). */
  workspaceDir: string
  /** `'scripted'` forces the deterministic driver; `'auto'` (default) uses a provider model when a key and package are there. */
  driver?: 'auto' | 'scripted'
  /**
   * `'auto'` (default): semantic search with `localEmbedder()` when its optional packages are
   * installed (they are devDependencies here); `'off'` (or `SUPPORT_AGENT_EMBED=off`): full text only.
   */
  embed?: 'auto' | 'off'
}

/** Builds the `support` agent over `workspaceDir`. */
export async function createSupportAgent(options: SupportAgentOptions): Promise<AgentDefinition> {
  const model = options.driver === 'scripted' ? undefined : await providerModel()
  const driver: AgentDriver = model ? { model, maxSteps: 6 } : supportDriver()
  const embed = options.embed === 'off' || process.env.SUPPORT_AGENT_EMBED === 'off' ? undefined : await localEmbedderIfInstalled()
  return defineAgent({
    name: 'support',
    instructions: [
      'You are a support agent with durable memory.',
      'Before answering a question about the user or earlier conversations, call memory_search with a few key words.',
      'When the user asks you to remember something, call memory_remember with kind "semantic"; it waits for the user\'s approval.',
      'When the user asks you to forget a record, call memory_delete with its id.',
    ].join(' '),
    driver,
    workspace: createWorkspace({ dir: options.workspaceDir }),
    capabilities: [
      memory({
        stores: {
          agent: {
            adapter: workspaceJsonlMemoryStore(),
            // Per-identity memory (tenant and user id: the same id in two tenants is two users);
            // without a user the store is off for the run rather than shared.
            scope: ({ user }) => (user?.id ? { agent: 'support', ...(user.tenant ? { tenant: user.tenant } : {}), user: user.id } : undefined),
            write: { mode: 'tool', policy: 'require-approval' },
            ...(embed ? { embed } : {}),
          },
        },
      }),
    ],
  })
}

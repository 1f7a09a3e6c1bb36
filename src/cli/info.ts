import type { AgentDefinition, AgentDriver, ModelDriver } from '../agent/types.ts'
import type { Workspace } from '../workspace/types.ts'

function isModelDriver(driver: AgentDriver): driver is ModelDriver {
  return 'model' in driver
}

/**
 * One line describing a driver: `model <provider>/<modelId>` for a model-backed driver (a
 * gateway model id string is shown as is), `custom-run` for a custom-run-backed driver.
 */
export function describeDriver(driver: AgentDriver): string {
  if ('provider' in driver) return `provider-backed${driver.provider.name ? ` ${driver.provider.name}` : ''} (MCP bridge)`
  if (!isModelDriver(driver)) return 'custom-run'
  const model = driver.model
  if (typeof model === 'string') return `model ${model}`
  return `model ${model.provider}/${model.modelId}`
}

/**
 * Where a workspace keeps its values: its folder (fs driver), `in memory` (unstorage's memory
 * driver), else the unstorage driver by name (`unstorage redis driver`).
 */
export function describeWorkspace(workspace: Workspace | undefined): string {
  if (!workspace) return 'none'
  if (workspace.dir) return workspace.dir
  const name = workspace.storage.getMount('').driver.name
  if (name === 'memory') return 'in memory'
  return name ? `unstorage ${name} driver` : 'unstorage storage'
}

/**
 * What `agent info` prints: name, driver, capabilities by id and the static tools
 * (`agent.tools`). Capability tools such as `memory_search` are not listed: capabilities add
 * them at invocation time (source: capability document, "Verify memory", step 1).
 */
export function describeAgent(agent: AgentDefinition, file?: string): string[] {
  const tools = Object.entries(agent.tools)
  return [
    `agent: ${agent.name}`,
    ...(file ? [`file: ${file}`] : []),
    `driver: ${describeDriver(agent.driver)}`,
    `workspace: ${describeWorkspace(agent.workspace)}`,
    `capabilities: ${agent.capabilities.length ? agent.capabilities.map(capability => capability.id).join(', ') : 'none'}`,
    `tools: ${tools.length ? '' : 'none'}`.trimEnd(),
    ...tools.map(([name, tool]) => `  ${name}: ${tool.description}`),
    'capability tools (for example memory_search) are added at invocation time and are not listed here',
  ]
}

import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { McpEndpoint } from '../agent/types.ts'
import { MCP_SERVER_VERSION } from './server.ts'

/**
 * Connects an `@modelcontextprotocol/sdk` `Client` to a bridge endpoint over Streamable HTTP,
 * sending the endpoint's bearer token with every request. Close it with `client.close()`.
 * The SDK's default request timeout is 60 s: for calls that may wait for approval longer, call
 * `client.callTool(params, undefined, { onprogress, resetTimeoutOnProgress: true })` (the bridge
 * sends progress every 10 s while waiting) or pass a larger `timeout`.
 */
export async function connectMcpClient(endpoint: Pick<McpEndpoint, 'url' | 'headers'>, name = 'vite-agent-memory-provider'): Promise<Client> {
  const client = new Client({ name, version: MCP_SERVER_VERSION })
  const transport = new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: endpoint.headers } })
  await client.connect(transport)
  return client
}

import { randomBytes, timingSafeEqual } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { agentError } from '../errors.ts'
import type { McpEndpoint } from '../agent/types.ts'
import type { ToolBridge } from './bridge.ts'
import { createMcpServer } from './server.ts'

/** Options of {@link startMcpHttpServer}. */
export interface McpHttpOptions {
  /** TCP port on 127.0.0.1. Default `0` (a free port chosen by the system). */
  port?: number
  /** Bearer token. Default: 32 random bytes as 64 hex characters. */
  token?: string
}

/** A running Streamable HTTP bridge: its endpoint and `close()`. */
export interface McpHttpServer extends McpEndpoint {
  /** Stops listening, ends open connections and closes the bridge (pending approvals are denied). */
  close(): Promise<void>
}

function refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }))
}

function hasToken(req: IncomingMessage, expected: Buffer): boolean {
  const header = req.headers.authorization
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false
  const given = Buffer.from(header.slice('Bearer '.length).trim())
  return given.length === expected.length && timingSafeEqual(given, expected)
}

/**
 * Serves `bridge` over MCP Streamable HTTP (stateless: a fresh SDK server and transport per
 * request) at `http://127.0.0.1:<port>/mcp`. Only loopback is bound. A request without
 * `Authorization: Bearer <token>` (or with another token) gets `401` and a JSON-RPC error, and
 * reaches no tool; another path gets `404`. Host headers other than `127.0.0.1:<port>` and
 * `localhost:<port>` are refused by the SDK's DNS-rebinding protection.
 *
 * @throws `MCP_LISTEN_FAILED` when the port cannot be bound.
 */
export async function startMcpHttpServer(bridge: ToolBridge, options: McpHttpOptions = {}): Promise<McpHttpServer> {
  const token = options.token ?? randomBytes(32).toString('hex')
  const expected = Buffer.from(token)
  let allowedHosts: string[] = []
  const http = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname
    if (path !== '/mcp') return refuse(res, 404, `Not found: the MCP endpoint is /mcp`)
    if (!hasToken(req, expected)) return refuse(res, 401, 'Unauthorized: send the bearer token of this MCP bridge in the Authorization header', { 'www-authenticate': 'Bearer realm="vite-agent-memory"' })
    const server = createMcpServer(bridge)
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableDnsRebindingProtection: true, allowedHosts })
    res.on('close', () => {
      void transport.close()
      void server.close()
    })
    server.connect(transport)
      .then(() => transport.handleRequest(req, res))
      .catch((error: unknown) => {
        if (!res.headersSent) refuse(res, 500, `MCP request failed: ${error instanceof Error ? error.message : String(error)}`)
      })
  })
  await new Promise<void>((resolve, reject) => {
    http.once('error', (error) => reject(agentError('MCP_LISTEN_FAILED', `the MCP bridge could not listen on 127.0.0.1:${options.port ?? 0}: ${error.message}`, 'pick another --port, or omit it for a free one', { port: options.port ?? 0 }, error)))
    http.listen(options.port ?? 0, '127.0.0.1', () => resolve())
  })
  const { port } = http.address() as AddressInfo
  allowedHosts = [`127.0.0.1:${port}`, `localhost:${port}`]
  let closed: Promise<void> | undefined
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    token,
    headers: { Authorization: `Bearer ${token}` },
    close() {
      closed ??= (async () => {
        await bridge.close()
        await new Promise<void>((resolve) => {
          http.close(() => resolve())
          http.closeAllConnections()
        })
      })()
      return closed
    },
  }
}

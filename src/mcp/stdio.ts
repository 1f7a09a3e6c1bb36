import type { Readable, Writable } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { ToolBridge } from './bridge.ts'
import { createMcpServer } from './server.ts'

/** A bridge served over stdio: `closed` settles when the client closes stdin or `close()` is called. */
export interface McpStdioServer {
  closed: Promise<void>
  close(): Promise<void>
}

/**
 * Serves `bridge` over MCP stdio (newline-delimited JSON-RPC on `stdin`/`stdout`, default the
 * process's). Nothing else may write to `stdout` while it runs; log to stderr. The client is the
 * process that started this one, so no token is needed. Ends when `stdin` ends.
 */
export async function serveMcpStdio(bridge: ToolBridge, streams: { stdin?: Readable; stdout?: Writable } = {}): Promise<McpStdioServer> {
  const stdin = streams.stdin ?? process.stdin
  const server = createMcpServer(bridge)
  const transport = new StdioServerTransport(stdin, streams.stdout ?? process.stdout)
  let finish: () => void = () => {}
  const ended = new Promise<void>((resolve) => { finish = resolve })
  let closing: Promise<void> | undefined
  const close = () => {
    closing ??= (async () => {
      await bridge.close()
      await server.close()
      finish()
    })()
    return closing
  }
  transport.onclose = () => { void close() }
  stdin.once('end', () => { void close() })
  await server.connect(transport)
  return { closed: ended, close }
}

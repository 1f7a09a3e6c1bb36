/**
 * `agent mcp --agent <name> [--user u] [--tenant t] [--transport stdio|http] [--port n] [--approval-timeout s]`
 * serves an agent's resolved tools to an external MCP client, with the user's scope
 * fixed at start. See docs/mcp.md.
 */
import { createInterface } from 'node:readline/promises'
import { defineCommand } from 'citty'
import type { AgentDefinition, AgentRunEvent, ApprovalRequest } from '../../agent/types.ts'
import { agentError, toErrorShape } from '../../errors.ts'
import { formatApprovalPrompt, formatError, formatEvent, formatJson, parseApprovalAnswer } from '../format.ts'
import { loadAgent, resolveRoot } from '../load-agent.ts'
import { releaseLoadedAgents } from '../release-agent.ts'
import { rejectUnknownOptions } from '../options.ts'

// Loaded when a command runs, so `agent --help` loads none of them.
const approvals = () => import('../../agent/approvals.ts')
const mcpHttp = () => import('../../mcp/http.ts')
const mcpSession = () => import('../../mcp/session.ts')
const mcpStdio = () => import('../../mcp/stdio.ts')

const args = {
  agent: { type: 'string', description: 'Agent name: server/agents/<name>.ts or server/agents/<name>/agent.ts', required: true },
  root: { type: 'string', description: 'Project root holding server/agents (default: cwd, or ./playground when cwd has playground/server/agents)' },
  user: { type: 'string', description: 'User id every call runs for; fixes the memory scope (default: demo)', default: 'demo' },
  tenant: { type: 'string', description: 'Tenant of the user, for agents whose scopes name one (default: none)' },
  transport: { type: 'string', description: 'stdio (the client starts this command) or http (Streamable HTTP on 127.0.0.1 with a bearer token)', default: 'stdio' },
  port: { type: 'string', description: 'Port for --transport http (default: a free port)' },
  'approval-timeout': { type: 'string', description: 'Seconds a require-approval call waits for a decision (default 300)' },
} as const

// stdout belongs to the MCP protocol under stdio: everything for people goes to stderr.
function log(text: string): void {
  process.stderr.write(`${text}\n`)
}

function positiveNumber(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const parsed = Number(value)
  if (!Number.isFinite(parsed) || parsed <= 0) throw agentError('CLI_INVALID_OPTION', `--${name} ${value} is not a positive number`, `pass --${name} with a number above 0, or omit it`)
  return parsed
}

/** Prints each session event to stderr; an approval request says how to answer it. */
function eventPrinter(agent: AgentDefinition, user: { id: string; tenant?: string }, ask: ((approval: ApprovalRequest) => void) | undefined) {
  return (event: AgentRunEvent) => {
    if (event.type === 'approval-request') {
      const { approval } = event
      log(`[approval] ${approval.id}: ${approval.toolName} ${formatJson(approval.input)} (${approval.reason})`)
      if (ask) ask(approval)
      else log(`  answer it from another terminal: npx agent dev --agent ${agent.name} --user ${user.id}${user.tenant ? ` --tenant ${user.tenant}` : ''}, then /approve ${approval.id} or /deny ${approval.id}`)
      return
    }
    const text = formatEvent(event)
    if (text !== undefined) log(text)
  }
}

/** `agent mcp`: see the file comment and docs/mcp.md. */
export const mcpCommand = defineCommand({
  meta: { name: 'mcp', description: 'Serve an agent\'s tools (memory included) to an MCP client over stdio or Streamable HTTP' },
  args,
  async run({ args: given }) {
    try {
      rejectUnknownOptions(given, args)
      const transport = given.transport
      if (transport !== 'stdio' && transport !== 'http') throw agentError('CLI_INVALID_OPTION', `--transport ${transport} is not supported`, 'pass --transport stdio or --transport http')
      const port = positiveNumber('port', given.port)
      const timeoutSeconds = positiveNumber('approval-timeout', given['approval-timeout'])
      const root = resolveRoot(given.root)
      process.chdir(root)
      const { agent } = await loadAgent(root, given.agent)
      const user = { id: given.user, ...(given.tenant ? { tenant: given.tenant } : {}) }

      // Under http with a terminal, approvals are asked here, like `agent dev` does.
      const terminal = transport === 'http' && process.stdin.isTTY === true ? createInterface({ input: process.stdin, output: process.stderr }) : undefined
      let asking = Promise.resolve()
      const ask = terminal && ((approval: ApprovalRequest) => {
        asking = asking.then(async () => {
          const current = (await (await approvals()).listApprovals(agent, { status: 'pending' })).find((candidate) => candidate.id === approval.id)
          if (!current) return
          const { approved, reason } = parseApprovalAnswer(await terminal.question(formatApprovalPrompt(approval)))
          await (await approvals()).resolveApproval(agent, approval.id, { approved, ...(reason ? { reason } : {}), approver: user.id, user }).result
        }).catch((error: unknown) => log(`[error] ${formatError(toErrorShape(error))}`))
      })

      const bridge = await (await mcpSession()).openMcpSession(agent, { user, onEvent: eventPrinter(agent, user, ask), ...(timeoutSeconds ? { approvalTimeoutMs: Math.round(timeoutSeconds * 1000) } : {}) })
      const tools = bridge.list().map((tool) => tool.name)
      if (transport === 'stdio') {
        const server = await (await mcpStdio()).serveMcpStdio(bridge)
        log(`agent mcp: serving ${agent.name} as user ${user.id}${user.tenant ? ` of tenant ${user.tenant}` : ''} over stdio (tools: ${tools.join(', ') || 'none'})`)
        const stop = () => { void server.close() }
        process.once('SIGINT', stop)
        process.once('SIGTERM', stop)
        await server.closed
        return
      }
      const server = await (await mcpHttp()).startMcpHttpServer(bridge, { ...(port ? { port } : {}) })
      process.stdout.write(`url: ${server.url}\ntoken: ${server.token}\n`)
      log(`agent mcp: serving ${agent.name} as user ${user.id}${user.tenant ? ` of tenant ${user.tenant}` : ''} over Streamable HTTP (tools: ${tools.join(', ') || 'none'}); send "Authorization: Bearer <token>"; Ctrl-C to stop`)
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve())
        process.once('SIGTERM', () => resolve())
      })
      terminal?.close()
      await server.close()
    } catch (error) {
      log(formatError(toErrorShape(error)))
      process.exitCode = 1
    } finally {
      await releaseLoadedAgents()
    }
  },
})

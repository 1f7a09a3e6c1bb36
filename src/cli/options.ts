/**
 * The strict-flags check every `agent` command runs before it acts: a flag the command does not
 * define is an error (config typos are errors), never ignored.
 */
import { stripVTControlCharacters } from 'node:util'
import { agentError } from '../errors.ts'

/** `approval-timeout` → `approvalTimeout`: the second key citty's parser sets for a kebab-case flag. */
function camelCase(name: string): string {
  return name.replace(/-([a-z0-9])/g, (_, letter: string) => letter.toUpperCase())
}

/**
 * Rejects keys of `args` (citty's parsed flags) that `known` (the command's `args` definition)
 * does not define, under their own name, their camel-case form (citty sets `approvalTimeout`
 * beside `approval-timeout`) or an alias. `_` (the positionals) is never a flag.
 *
 * @throws `CLI_UNKNOWN_OPTION` naming the unknown flags, the fix listing the known ones.
 */
export function rejectUnknownOptions(args: Record<string, unknown>, known: Record<string, unknown>): void {
  const accepted = new Set<string>(['_'])
  for (const [name, spec] of Object.entries(known)) {
    accepted.add(name)
    accepted.add(camelCase(name))
    const alias = (spec as { alias?: string | string[] }).alias
    for (const other of typeof alias === 'string' ? [alias] : (alias ?? [])) accepted.add(other)
  }
  const unknown = Object.keys(args).filter(key => !accepted.has(key))
  if (unknown.length) {
    throw agentError('CLI_UNKNOWN_OPTION', `unknown option ${unknown.map(key => `--${key}`).join(', ')}`, `use only ${Object.keys(known).map(key => `--${key}`).join(', ')} (see --help)`, { options: unknown })
  }
}

/**
 * Rejects a string flag given an empty value (`--user ""`, often an unset shell variable in
 * `--user "$USER_ID"`), which would otherwise fall through to a default or to an error far from
 * the flag: for `--user`, every chat line failing with `RUN_OPTIONS_INVALID`.
 *
 * @throws `CLI_INVALID_OPTION` naming the flag.
 */
export function rejectEmptyOptions(args: Record<string, unknown>, known: Record<string, unknown>): void {
  for (const [name, spec] of Object.entries(known)) {
    if ((spec as { type?: string }).type !== 'string') continue
    if (args[name] === '') throw agentError('CLI_INVALID_OPTION', `--${name} is empty`, `pass a value to --${name}, or leave --${name} out for its default (see --help)`, { option: name })
  }
}

/** A command of the `agent` tree as {@link commandErrorOf} reads it (citty's `CommandDef`, resolved). */
export interface CommandNode {
  meta?: { name?: string }
  args?: Record<string, unknown>
  subCommands?: Record<string, CommandNode>
}

/**
 * The command `rawArgs` names (`agent memory list ...` → the `list` node) and its words
 * (`['agent', 'memory', 'list']`): the first words that name subcommands, flags skipped.
 */
export function namedCommand(root: CommandNode, rawArgs: readonly string[]): { node: CommandNode; words: string[] } {
  let node = root
  const words = [root.meta?.name ?? 'agent']
  for (const arg of rawArgs) {
    if (arg.startsWith('-')) continue
    const next = node.subCommands?.[arg]
    if (!next) break
    node = next
    words.push(arg)
  }
  return { node, words }
}

/**
 * The coded error for one of citty's own argument errors (`CLIError`: a missing required flag or
 * positional, an unknown command, no subcommand), which citty prints as a bare sentence with
 * colour codes even into a pipe. Any other value is returned unchanged.
 */
export function commandErrorOf(error: unknown, root: CommandNode, rawArgs: readonly string[]): unknown {
  if (!(error instanceof Error) || error.name !== 'CLIError') return error
  const code = (error as { code?: unknown }).code
  const { node, words } = namedCommand(root, rawArgs)
  const command = words.join(' ')
  const help = `see ${command} --help`
  const message = stripVTControlCharacters(error.message)
  const subcommands = Object.keys(node.subCommands ?? {})
  if (code === 'E_UNKNOWN_COMMAND') {
    const name = /^Unknown command (.+)$/.exec(message)?.[1] ?? message
    return agentError('CLI_UNKNOWN_COMMAND', `${command} has no command "${name}"`, `use one of ${subcommands.join(', ')} (${help})`, { command: name })
  }
  if (code === 'E_NO_COMMAND') return agentError('CLI_COMMAND_REQUIRED', `${command} needs a command`, `use one of ${subcommands.join(', ')} (${help})`)
  const flag = /^Missing required argument: --(.+)$/.exec(message)?.[1]
  if (flag !== undefined) return agentError('CLI_MISSING_ARGUMENT', `${command} needs --${flag}`, `pass --${flag} <${flag}> (${help})`, { option: flag })
  const positional = /^Missing required positional argument: (.+)$/.exec(message)?.[1]
  if (positional !== undefined) return agentError('CLI_MISSING_ARGUMENT', `${command} needs its ${positional.toLowerCase()} argument`, `pass it after the command, for example ${command} <${positional.toLowerCase()}> (${help})`, { argument: positional.toLowerCase() })
  return agentError('CLI_INVALID_OPTION', message.replace(/\.$/, ''), help)
}

/**
 * The strict-flags check every `agent` command runs before it acts: a flag the command does not
 * define is an error (config typos are errors), never ignored.
 */
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

/**
 * Integrity seals of the host's approval files: an HMAC-SHA-256 over the canonical JSON of the
 * value, keyed by a per-workspace secret kept in the workspace (`host/integrity.key`, 32 random
 * bytes as hex, created once with a conditional append so that concurrent processes agree on one).
 *
 * What it proves: a file was written by code holding the secret, and not changed since. It
 * cannot tell apart two versions both sealed by the host (an older sealed copy put back); the
 * decision claim (see store.ts) covers that case for approvals. Whoever can read the workspace
 * can read the secret: the seal detects edits by tools and people that change files without it
 * (a hand edit, a copied file, another workspace's file). See docs/security.md.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import { agentError } from '../errors.ts'
import { canonicalJson } from '../log/index.ts'
import type { Workspace } from '../workspace/types.ts'

/** Workspace key of the per-workspace secret. */
export const INTEGRITY_KEY_PATH = 'host:integrity.key'

/** Prefix of every seal: the algorithm, so that another one can be added later. */
const SEAL_PREFIX = 'hmac-sha256:'

const secrets = new WeakMap<Workspace, Promise<Buffer>>()

/**
 * The workspace's secret: read, or created when missing (one winner across processes: the
 * create is an append only when the value is still empty, and everybody reads the winner's).
 *
 * @throws `HOST_SECRET_INVALID` when the stored secret is not 64 hex characters.
 */
export function workspaceSecret(workspace: Workspace): Promise<Buffer> {
  let secret = secrets.get(workspace)
  if (!secret) {
    secret = loadSecret(workspace)
    secret.catch(() => secrets.delete(workspace))
    secrets.set(workspace, secret)
  }
  return secret
}

async function loadSecret(workspace: Workspace): Promise<Buffer> {
  let text = await workspace.readText(INTEGRITY_KEY_PATH)
  if (text === undefined || text === '') {
    await workspace.append(INTEGRITY_KEY_PATH, `${randomBytes(32).toString('hex')}\n`, { ifSize: 0 })
    text = await workspace.readText(INTEGRITY_KEY_PATH)
  }
  const hex = text?.trim() ?? ''
  if (!/^[0-9a-f]{64}$/.test(hex)) {
    throw agentError('HOST_SECRET_INVALID', `the workspace secret "${INTEGRITY_KEY_PATH}" is not 64 hex characters`, `restore the file from a backup; removing it makes every stored approval fail its integrity check (ask for those actions again)`)
  }
  return Buffer.from(hex, 'hex')
}

/** The seal of `value` (any JSON data) under `secret`: `hmac-sha256:<64 hex>`. */
export function seal(secret: Buffer, value: unknown): string {
  return SEAL_PREFIX + createHmac('sha256', secret).update(canonicalJson(value)).digest('hex')
}

/** Whether `stored` is the seal of `value` under `secret` (compared in constant time). */
export function verifySeal(secret: Buffer, value: unknown, stored: unknown): boolean {
  if (typeof stored !== 'string' || !stored.startsWith(SEAL_PREFIX)) return false
  const expected = Buffer.from(seal(secret, value))
  const actual = Buffer.from(stored)
  return expected.length === actual.length && timingSafeEqual(expected, actual)
}

/**
 * One identity everywhere: who owns a thread, an approval and (through the agent's scope
 * functions) a memory scope. An identity is the pair (tenant, user id); two users with the same
 * id in different tenants are different identities, and a user without a tenant is another
 * identity again. Every comparison the host makes goes through {@link sameIdentity}.
 * See docs/security.md, "One identity everywhere".
 */
import type { AgentUser } from './types.ts'

/** The part of a user that identifies them: the user id and, when the identity has one, the tenant. */
export interface IdentityRef {
  id: string
  tenant?: string
}

/** The {@link IdentityRef} of a user (`undefined` without one); other claims are left out. */
export function identityOf(user: AgentUser | IdentityRef | undefined): IdentityRef | undefined {
  if (!user) return undefined
  return { id: user.id, ...(typeof user.tenant === 'string' && user.tenant !== '' ? { tenant: user.tenant } : {}) }
}

/**
 * Whether two users are the same identity: same id and same tenant (both without a tenant
 * counts as the same tenant). Two missing users are the same (runs without a user); a missing
 * and a present one are not.
 */
export function sameIdentity(a: AgentUser | IdentityRef | undefined, b: AgentUser | IdentityRef | undefined): boolean {
  const left = identityOf(a)
  const right = identityOf(b)
  if (!left || !right) return left === right
  return left.id === right.id && left.tenant === right.tenant
}

/**
 * A string naming the identity unambiguously, for keys and indexes: the JSON array
 * `[tenant or null, id]` (JSON quoting keeps `"a:b"` in one tenant apart from `"b"` in tenant `a`).
 */
export function identityKey(user: AgentUser | IdentityRef | undefined): string {
  const identity = identityOf(user)
  return identity ? JSON.stringify([identity.tenant ?? null, identity.id]) : 'null'
}

import { createLocalJWKSet, createRemoteJWKSet, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose'
import type { H3Event } from 'h3'
import { agentError } from '../errors.ts'
import type { AgentIdentity, IdentifyHook } from './types.ts'

/** Options of {@link jwtIdentity}: exactly one of `secret` or `jwks`. */
export interface JwtIdentityOptions {
  /** Shared secret for HS256/384/512 tokens (a string is UTF-8 encoded; use at least 32 bytes). */
  secret?: string | Uint8Array
  /** Public keys: a JWKS URL (fetched and cached by jose) or a key set object. */
  jwks?: string | URL | JSONWebKeySet
  /** Required `iss` claim, when given. */
  issuer?: string | string[]
  /** Required `aud` claim, when given. */
  audience?: string | string[]
  /** Accepted algorithms. Default: `['HS256', 'HS384', 'HS512']` with `secret`, jose's asymmetric defaults with `jwks`. */
  algorithms?: string[]
  /** Claim holding the user id. Default `'sub'`. */
  userClaim?: string
  /** Claim holding the tenant, when tenants are used. Default `'tenant'` (left out when absent). */
  tenantClaim?: string
  /** Clock tolerance for `exp`/`nbf` in seconds. Default 5. */
  clockToleranceSeconds?: number
  /** Refuse tokens without an `exp` claim (they would never expire). Default `true`. */
  requireExpiry?: boolean
}

/** Reads the bearer token from `authorization: Bearer <jwt>`. */
function bearer(event: H3Event): string | undefined {
  const header = event.req.headers.get('authorization')
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null
  return match?.[1]
}

/**
 * An `identify(event)` hook that verifies a JWT from `authorization: Bearer <jwt>` with jose
 * (signature, `exp` (required unless `requireExpiry: false`), `nbf`, and `iss`/`aud` when configured) and returns
 * `{ id: <sub>, tenant?: <tenant claim>, claims }`: a ready-made `identify` built on `jose`, so an
 * app with bearer tokens needs no identity code of its own.
 *
 * A request without a token gets `undefined` (401 `UNAUTHENTICATED`); a bad, expired or
 * wrongly signed token, or one without the user claim, throws `AUTH_TOKEN_INVALID` (401), whose
 * message does not echo the token.
 *
 * @throws `SERVER_OPTIONS_INVALID` at creation unless exactly one of `secret` and `jwks` is given,
 * or for an unknown option key.
 */
export function jwtIdentity(options: JwtIdentityOptions): IdentifyHook {
  const known = ['secret', 'jwks', 'issuer', 'audience', 'algorithms', 'userClaim', 'tenantClaim', 'clockToleranceSeconds', 'requireExpiry']
  const unknown = Object.keys(options ?? {}).filter(key => !known.includes(key))
  if (unknown.length) throw agentError('SERVER_OPTIONS_INVALID', `jwtIdentity() got unknown option ${unknown.map(key => `"${key}"`).join(', ')}`, `use only ${known.join(', ')}`, { options: unknown })
  // `{ secret: process.env.JWT_SECRET! }` (the documented form) with the variable unset.
  if (options != null && options.secret === undefined && options.jwks === undefined && Object.hasOwn(options, 'secret')) {
    throw agentError('SERVER_OPTIONS_INVALID', 'jwtIdentity() got `secret: undefined`, as `process.env.JWT_SECRET` is when the variable is not set', 'set the environment variable the app reads (for example JWT_SECRET) before starting it, or pass `jwks` instead')
  }
  if ((options?.secret === undefined) === (options?.jwks === undefined)) {
    throw agentError('SERVER_OPTIONS_INVALID', 'jwtIdentity() needs exactly one of `secret` and `jwks`', 'pass jwtIdentity({ secret: process.env.JWT_SECRET }) or jwtIdentity({ jwks: "https://issuer/.well-known/jwks.json" })')
  }
  const userClaim = options.userClaim ?? 'sub'
  const tenantClaim = options.tenantClaim ?? 'tenant'
  const verifyOptions = {
    ...(options.issuer ? { issuer: options.issuer } : {}),
    ...(options.audience ? { audience: options.audience } : {}),
    clockTolerance: options.clockToleranceSeconds ?? 5,
    ...(options.requireExpiry === false ? {} : { requiredClaims: ['exp'] }),
  }
  let verify: (token: string) => Promise<JWTPayload>
  if (options.secret !== undefined) {
    const key = typeof options.secret === 'string' ? new TextEncoder().encode(options.secret) : options.secret
    if (key.length === 0) throw agentError('SERVER_OPTIONS_INVALID', 'jwtIdentity() got an empty secret', 'pass a secret of at least 32 bytes (for example from an environment variable that is set)')
    const algorithms = options.algorithms ?? ['HS256', 'HS384', 'HS512']
    verify = async token => (await jwtVerify(token, key, { ...verifyOptions, algorithms })).payload
  } else {
    const jwks = options.jwks!
    const keySet = typeof jwks === 'string' || jwks instanceof URL ? createRemoteJWKSet(new URL(jwks)) : createLocalJWKSet(jwks)
    const algorithms = options.algorithms ? { algorithms: options.algorithms } : {}
    verify = async token => (await jwtVerify(token, keySet, { ...verifyOptions, ...algorithms })).payload
  }
  return async (event): Promise<AgentIdentity | undefined> => {
    const token = bearer(event)
    if (!token) return undefined
    let payload: JWTPayload
    try {
      payload = await verify(token)
    } catch (error) {
      const reason = (error as { code?: unknown }).code
      throw agentError('AUTH_TOKEN_INVALID', `the bearer token was refused (${typeof reason === 'string' ? reason : 'verification failed'})`, 'sign in again to get a valid, unexpired token')
    }
    const id = payload[userClaim]
    if (typeof id !== 'string' || id.length === 0) {
      throw agentError('AUTH_TOKEN_INVALID', `the bearer token has no "${userClaim}" claim`, `issue tokens with the user id in "${userClaim}"`)
    }
    const tenant = payload[tenantClaim]
    return { id, ...(typeof tenant === 'string' && tenant ? { tenant } : {}), claims: payload }
  }
}

import Redis from 'ioredis'
import { afterAll, beforeAll } from 'vitest'
import { createStorage } from 'unstorage'
import redisDriver from 'unstorage/drivers/redis'
import { createWorkspace } from '../../src/workspace/workspace.ts'
import type { Workspace } from '../../src/workspace/types.ts'

/** The Redis the multi-instance tests use: REDIS_URL (set by .ci/run) or a local server on 6390. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6390'

/** Printed when a Redis test is skipped, with the command that would make it run. */
export const REDIS_SKIP_HINT = `no Redis reachable at ${REDIS_URL} (start one with: redis-server --port 6390 --save '' --appendonly no --daemonize yes)`

/** A connected client (the caller disconnects it), or `undefined` when no Redis answers a PING. */
export async function connectRedis(): Promise<Redis | undefined> {
  const client = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  client.on('error', () => {})
  try {
    await client.connect()
    await client.ping()
    return client
  }
  catch {
    client.disconnect()
    return undefined
  }
}

/** A workspace on the unstorage redis driver, its keys under `base`. */
export function redisWorkspace(base: string): Workspace {
  return createWorkspace({ storage: createStorage({ driver: redisDriver({ url: REDIS_URL, base }) }) })
}

/**
 * For a describe block of Redis tests: connects a probe client before them (warning with
 * {@link REDIS_SKIP_HINT} when none answers) and, after them, deletes the keys under `prefix` and
 * disconnects. Read `redis.probe` (undefined when unreachable) inside the tests.
 */
export function useRedisProbe(prefix: string, what: string): { probe: Redis | undefined } {
  const redis: { probe: Redis | undefined } = { probe: undefined }
  beforeAll(async () => {
    redis.probe = await connectRedis()
    if (!redis.probe) console.warn(`${what} skipped: ${REDIS_SKIP_HINT}`)
  })
  afterAll(async () => {
    const probe = redis.probe
    if (!probe) return
    const keys = await probe.keys(`${prefix}*`)
    if (keys.length) await probe.del(...keys)
    probe.disconnect()
  })
  return redis
}

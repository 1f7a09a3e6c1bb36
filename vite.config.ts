import { defineConfig } from 'vitest/config'
import { playwright } from '@vitest/browser-playwright'
import type { Plugin, ViteDevServer } from 'vite'
import type { AgentMemoryPluginOptions, DevMiddleware } from './src/vite/index.ts'

/** Chromium flags for headless runs as root in CI (see /work/shared/toolchain.md). */
const CHROMIUM_FLAGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync',
]

/**
 * The agent plugin, loaded through the browser project's own dev server at the first request
 * under /__agents rather than bundled into this config: a broken source file then fails the
 * browser tests that need it, not the loading of the whole test configuration.
 */
function agentMemoryFromSource(options: AgentMemoryPluginOptions): Plugin {
  return {
    name: 'vite-agent-memory:from-source',
    apply: 'serve',
    configureServer(server: ViteDevServer) {
      let middleware: Promise<DevMiddleware> | undefined
      server.middlewares.use((req, res, next) => {
        if (!req.url?.startsWith('/__agents')) return next()
        middleware ??= (server.ssrLoadModule('/src/vite/index.ts') as Promise<typeof import('./src/vite/index.ts')>).then(loaded => loaded.createDevMiddleware(server, options))
        middleware.then(handle => handle(req, res, next), next)
      })
    },
  }
}

// Two projects: the library's tests in Node, and the playground's browser tests in Debian's
// Chromium. The browser project's dev server mounts the agent plugin over the fixture project in
// test/browser/fixture (the playground's support agent on a temporary workspace), so the tests
// drive the real routes of `vite dev` from a real page.
export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'node',
          include: ['test/**/*.test.ts'],
          exclude: ['test/browser/**', '**/node_modules/**'],
          environment: 'node',
          pool: 'forks',
        },
      },
      {
        extends: true,
        plugins: [agentMemoryFromSource({ root: 'test/browser/fixture', users: ['ann', 'ben'] })],
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          browser: {
            enabled: true,
            headless: true,
            provider: playwright({ launchOptions: { executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium', args: CHROMIUM_FLAGS } }),
            instances: [{ browser: 'chromium' }],
            screenshotFailures: false,
          },
        },
      },
    ],
  },
})

import { defineConfig } from 'vitest/config'

// One config for the library's tests (node) today; the browser project and the
// playground's dev server join it when the Vite plugin lands.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
})

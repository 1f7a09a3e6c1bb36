import { defineConfig } from 'tsdown'

/** A declaration file (`.d.ts`, `.d.mts`, `.d.cts`) as the importer of a module. */
const DECLARATION = /\.d\.[cm]?ts$/

// The library build (`npm run build`): one ESM entry per public subpath plus the `agent` bin, and
// their declarations. Dependencies stay external in the JavaScript. In the declarations,
// unstorage's types are copied in: its `index.d.mts` imports the option types of every driver
// (Azure, Cloudflare, Deno, MongoDB, ...) from packages an app does not have, so a consumer
// compiling with `skipLibCheck: false` would get an error for each of them.
export default defineConfig({
  entry: ['src/index.ts', 'src/capabilities/index.ts', 'src/testing/index.ts', 'src/cli/main.ts', 'src/vite/index.ts', 'src/server/index.ts'],
  root: 'src',
  dts: true,
  deps: {
    alwaysBundle: (id, importer) => id === 'unstorage' && importer !== undefined && DECLARATION.test(importer),
  },
})

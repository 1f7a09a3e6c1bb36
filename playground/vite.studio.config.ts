// The studio UI as the library build ships it (`npm run build`, second step): playground/index.html
// and its sources bundled into dist/studio with relative asset URLs, so the plugin and
// `agent studio` can serve it under any prefix (`<prefix>/studio/`).
import { fileURLToPath } from 'node:url'
import { defineConfig } from 'vite'

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/studio', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    reportCompressedSize: false,
  },
})

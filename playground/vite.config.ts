// The playground's dev server (`npm run dev`): the agent routes under /__agents, the UI at /.
import { defineConfig } from 'vite'
import { agentMemory } from '../src/vite/index.ts'

export default defineConfig({
  plugins: [agentMemory()],
  server: { port: Number(process.env.PORT) || 5173 },
})

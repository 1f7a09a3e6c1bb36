/** Test helpers for agents and memory stores built with vite-agent-memory (no test framework imported: `testMemoryStore` takes yours). */
export { scriptedModel } from './scripted-model.ts'
export type { ScriptedModel, ScriptedStep, ScriptedStepInput, ScriptedToolCall } from './scripted-model.ts'
export { testMemoryStore } from './store-conformance.ts'
export type { ConformanceMatchers, ConformanceTestApi } from './store-conformance.ts'

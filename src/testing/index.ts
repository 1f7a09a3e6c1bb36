/** Test helpers for agents built with vite-agent-memory (no test framework required). */
export { scriptedModel } from './scripted-model.ts'
export type { ScriptedModel, ScriptedStep, ScriptedStepInput, ScriptedToolCall } from './scripted-model.ts'
export { testMemoryStore } from './store-conformance.ts'
export type { ConformanceMatchers, ConformanceTestApi } from './store-conformance.ts'

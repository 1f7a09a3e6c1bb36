/** Official capabilities: `memory()` and its store adapters. */
export { memory } from '../memory/capability.ts'
export { workspaceJsonlMemoryStore } from '../memory/stores/workspace-jsonl.ts'
export type { WorkspaceJsonlMemoryStoreOptions } from '../memory/stores/workspace-jsonl.ts'
export { inMemoryMemoryStore } from '../memory/stores/in-memory.ts'
export type * from '../memory/types.ts'
export { MEMORY_SCOPE_FIELDS } from '../memory/types.ts'

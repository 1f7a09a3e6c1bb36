/**
 * Default locations of the workspace and the memory log, in a module of their own so that code
 * which only names them (the `agent` command's help) does not load the workspace and the log engine.
 */

/** Default folder of the fs-backed workspace, relative to `process.cwd()`. */
export const DEFAULT_WORKSPACE_DIR = '.agent/workspace'

/** Default `path` of the workspace JSONL memory log (source: capability document, Workspace JSONL store options). */
export const DEFAULT_MEMORY_LOG_PATH = 'memory/memory.jsonl'

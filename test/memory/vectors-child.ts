/**
 * Child process of the durable-vectors test: opens the JSONL store in workspace `<dir>`, runs one
 * hybrid search with the counting embedder of `vectors-embedder.ts` and prints, as one JSON line,
 * the ids found and the texts it embedded, call by call.
 *
 * Usage: node --import tsx vectors-child.ts <workspace dir> <query> [model id]
 */
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { workspaceJsonlMemoryStore } from '../../src/memory/stores/workspace-jsonl.ts'
import { hybridSearch } from '../../src/memory/hybrid-search.ts'
import { countingEmbedder } from '../search/vectors-embedder.ts'

const [dir, query, modelId] = process.argv.slice(2) as [string, string, string | undefined]
const adapter = workspaceJsonlMemoryStore().create({ store: 'agent', agent: 'support', workspace: createWorkspace({ dir }), writable: true })
const model = countingEmbedder(modelId)
const hits = await hybridSearch(adapter, { store: 'agent', scope: { agent: 'support' } }, { query, limit: 3 }, { model })
process.stdout.write(`${JSON.stringify({ ids: hits.map(hit => hit.record.id), batches: model.batches })}\n`)

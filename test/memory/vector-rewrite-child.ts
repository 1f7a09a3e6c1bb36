/**
 * Child process of the sidecar erasure fault test: rewrites the vector sidecar `<key>` of the fs
 * workspace `<dir>` without the ids given, `<chunk bytes>` at a time, printing `start` first and
 * `done` after (the parent kills it in between).
 *
 * Usage: node --import tsx vector-rewrite-child.ts <workspace dir> <key> <chunk bytes> <id,id,...>
 */
import { createWorkspace } from '../../src/workspace/workspace.ts'
import { rewriteWithout } from '../../src/memory/vector-sidecar.ts'

const [dir, key, chunk, ids] = process.argv.slice(2) as [string, string, string, string]
const workspace = createWorkspace({ dir })
process.stdout.write('start\n')
await rewriteWithout(workspace, key, new Set(ids.split(',')), Number(chunk))
process.stdout.write('done\n')

import { existsSync, readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { join } from 'node:path'

/** The repository root (test/cli/ is two levels down). */
export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** LoCoMo data beside the repository: `../shared/data/locomo` (the CI clone has shared/ beside it too). */
export const LOCOMO_DIR = join(REPO_ROOT, '..', 'shared', 'data', 'locomo')
export const CONV_26 = join(LOCOMO_DIR, 'conv-26.json')
export const HAS_LOCOMO = existsSync(CONV_26)
if (!HAS_LOCOMO) console.warn(`[test/cli] LoCoMo data not found at ${CONV_26}: the LoCoMo tests are skipped`)

/** Observations per speaker, counted straight from the JSON (independently of the importer). */
export function countObservations(file: string): Map<string, number> {
  const data = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>
  const counts = new Map<string, number>()
  for (const [key, value] of Object.entries(data)) {
    if (!/^session_\d+_observation$/.test(key)) continue
    for (const [speaker, facts] of Object.entries(value as Record<string, unknown[]>)) counts.set(speaker, (counts.get(speaker) ?? 0) + facts.length)
  }
  return counts
}

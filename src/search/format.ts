import { hash53 } from './hash.ts'
import { ENGLISH_STOP_WORDS, forEachTokenAndRun, tokenizeWords } from './text.ts'

// 4: four fields per slot (title, content, tags, dates), 7 bits per inline field count; a posting
// value of 0 repeats the previous posting's value of its list.
const SNAPSHOT_VERSION = 4
// Text that exercises every tokenizer rule: a snapshot taken under other tokenization is not restored.
const TOKENIZER_PROBE = "Caroline's PAINTINGS, café Naïve ｆｕｌｌ-width 東京都 iPhone用 カタカナー 한국어 3.5 2023 running ran went children hopped generously relational roadtrip don't we've O'Neil ß ﬁ Ωmega May may May's Máy"
let snapshotFormat: string | undefined

/**
 * The format of index snapshots this code writes and restores: a version and a checksum of how the
 * tokenizer (text.ts) and the run rule split a probe text and which words are stop-words, so that
 * a change of tokenization makes old snapshots stale instead of wrong.
 */
export function searchIndexFormat(): string {
  if (snapshotFormat === undefined) {
    const parts: string[] = [[...ENGLISH_STOP_WORDS].sort().join(' ')]
    for (const { surface, term } of tokenizeWords(TOKENIZER_PROBE)) parts.push(`${surface}>${term}`)
    forEachTokenAndRun(TOKENIZER_PROBE, { word: run => parts.push(`w:${run}`), run: run => parts.push(`r:${run}`), surface: surface => parts.push(`s:${surface}`) })
    snapshotFormat = `${SNAPSHOT_VERSION}:${hash53(parts.join('\n'))}`
  }
  return snapshotFormat
}

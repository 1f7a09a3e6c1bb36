/** Byte counts of UTF-8 text: offsets in the log are byte offsets, while lines are handled as strings. */

const nodeBuffer = (globalThis as { Buffer?: { byteLength(text: string, encoding: 'utf8'): number } }).Buffer

/** UTF-8 byte length of `text` without encoding it (lone surrogates count 3, as Node writes U+FFFD). */
export function utf8Length(text: string): number {
  if (nodeBuffer) return nodeBuffer.byteLength(text, 'utf8')
  let bytes = 0
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    if (code < 0x80) bytes += 1
    else if (code < 0x800) bytes += 2
    else if (code >= 0xd800 && code <= 0xdbff && index + 1 < text.length) {
      const next = text.charCodeAt(index + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        index++
      }
      else bytes += 3
    }
    else bytes += 3
  }
  return bytes
}

/** Newline bytes in `bytes` (a `\n` byte is never part of a multi-byte sequence). */
export function countNewlines(bytes: Uint8Array): number {
  let count = 0
  for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) count++
  return count
}

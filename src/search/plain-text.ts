import type { SearchDocument, SearchText } from './types.ts'

/** The default {@link SearchText}: a document's `title` (or `''`), `content` and `tags` as they are. */
export const PLAIN_TEXT: SearchText = {
  title: document => document.title ?? '',
  content: document => document.content,
  tags: document => document.tags,
}

/** `text` typed for documents of type `D` (the default accepts any document). */
export function textOf<D extends SearchDocument>(text: SearchText<D> | undefined): SearchText<D> {
  return text ?? (PLAIN_TEXT as SearchText<D>)
}

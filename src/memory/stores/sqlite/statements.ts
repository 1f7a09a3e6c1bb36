/**
 * A connection's prepared statements, each prepared the first time it is read: an open prepares
 * only what its first operation runs (a cold open -> first search runs a few of the 35 the store
 * and its FTS5 tail used to prepare at every open), and
 * every statement is prepared once per connection.
 */

/** Makers of statements by name. */
type Makers = Record<string, () => unknown>

/**
 * An object with one property per maker, whose first read runs the maker and every later read
 * returns what it made. The shape is fixed when made (one accessor per name), so a read stays a
 * fast property access on the append path.
 */
export function lazyStatements<T extends Makers>(makers: T): { readonly [K in keyof T]: ReturnType<T[K]> } {
  const statements = {}
  for (const [name, make] of Object.entries(makers)) {
    let made: unknown
    Object.defineProperty(statements, name, { enumerable: true, get: () => (made ??= make()) })
  }
  return statements as { readonly [K in keyof T]: ReturnType<T[K]> }
}

/**
 * The records of a checkpoint section as columns (version 6, docs/log-format.md "Checkpoints"):
 * one list per field instead of one object per record, so that an open parses a few long lists
 * and no field name per record, and a field every record holds alike (the store, the kind, a
 * shared scope's number, `"active"`) is stored once.
 *
 * `{"keys":[field, ...],"shapes":[[key number, ...], ...],"shape":[shape number per record],"columns":[column per key]}`:
 * `keys` every field name in the order it was first met; `shapes` the distinct field lists of the
 * records (key numbers, in each record's own field order); `shape` the shape of each record, left
 * out when they all have the first; a column either the values of the records holding that field,
 * in record order, or `{"all": value}` when every record holding it holds the same primitive value.
 */

/** The columns of a section's records (see the file comment). */
export interface RecordColumns {
  keys: string[]
  shapes: number[][]
  shape?: number[]
  columns: Array<unknown[] | { all: unknown }>
}

/** `records` (plain JSON objects, as a section packs them) as {@link RecordColumns}. */
export function recordColumns(records: ReadonlyArray<Record<string, unknown>>): RecordColumns {
  const keys: string[] = []
  const keyNumbers = new Map<string, number>()
  const shapes: number[][] = []
  const shapeNumbers = new Map<string, number>()
  const shape: number[] = []
  const values: unknown[][] = []
  for (const record of records) {
    const fields = Object.keys(record)
    const signature = fields.join('\u0000')
    let number = shapeNumbers.get(signature)
    if (number === undefined) {
      shapeNumbers.set(signature, number = shapes.length)
      shapes.push(fields.map((field) => {
        let key = keyNumbers.get(field)
        if (key === undefined) {
          keyNumbers.set(field, key = keys.length)
          keys.push(field)
          values.push([])
        }
        return key
      }))
    }
    shape.push(number)
    for (const field of fields) values[keyNumbers.get(field)!]!.push(record[field])
  }
  const columns = values.map(column => (column.length > 0 && isPrimitive(column[0]) && column.every(value => value === column[0]) ? { all: column[0] } : column))
  return { keys, shapes, ...(shapes.length > 1 ? { shape } : {}), columns }
}

/**
 * The `count` records of {@link RecordColumns}, each with its fields in its shape's order.
 *
 * @throws Error when `value` is not columns of `count` records (a key, shape or column missing,
 * a column of another length than the records holding its field).
 */
export function recordsOfColumns(value: unknown, count: number): Array<Record<string, unknown>> {
  const malformed = () => new Error('the record columns are malformed')
  const { keys, shapes, shape, columns } = (value ?? {}) as Partial<RecordColumns>
  if (!Array.isArray(keys) || !Array.isArray(shapes) || !Array.isArray(columns) || columns.length !== keys.length || !keys.every(key => typeof key === 'string' && key !== '__proto__')) throw malformed()
  if (shape === undefined ? count > 0 && shapes.length !== 1 : !Array.isArray(shape) || shape.length !== count) throw malformed()
  for (const fields of shapes) {
    if (!Array.isArray(fields) || !fields.every(key => Number.isInteger(key) && key >= 0 && key < keys.length)) throw malformed()
  }
  // How many records hold each field: a column of values must be exactly that long.
  const held = new Array<number>(keys.length).fill(0)
  const shapeCounts = new Array<number>(shapes.length).fill(0)
  for (let at = 0; at < count; at++) {
    const number = shape === undefined ? 0 : shape[at]
    if (!Number.isInteger(number) || number! < 0 || number! >= shapes.length) throw malformed()
    shapeCounts[number!]!++
  }
  for (const [number, fields] of shapes.entries()) for (const key of fields) held[key]! += shapeCounts[number]!
  const lists: Array<unknown[] | undefined> = []
  const constants: unknown[] = []
  for (const [key, column] of columns.entries()) {
    if (Array.isArray(column)) {
      if (column.length !== held[key]) throw malformed()
      lists.push(column)
    }
    else if (column !== null && typeof column === 'object' && Object.hasOwn(column, 'all')) {
      lists.push(undefined)
      constants[key] = column.all
    }
    else throw malformed()
  }
  // Each record is a copy of its shape's template, made by JSON.parse as a parse of the record
  // would make it: its fields are in the object itself (set one by one on `{}`, most would be in
  // a second array), and a copy of a template is made in one step.
  const templates = shapes.map(fields => JSON.parse(`{${fields.map(key => `${JSON.stringify(keys[key])}:null`).join(',')}}`) as Record<string, unknown>)
  const cursors = new Array<number>(keys.length).fill(0)
  const records = new Array<Record<string, unknown>>(count)
  for (let at = 0; at < count; at++) {
    const number = shape === undefined ? 0 : shape[at]!
    const fields = shapes[number]!
    const record: Record<string, unknown> = { ...templates[number] }
    for (const key of fields) {
      const list = lists[key]
      record[keys[key]!] = list === undefined ? constants[key] : list[cursors[key]!++]
    }
    records[at] = record
  }
  return records
}

function isPrimitive(value: unknown): boolean {
  return value === null || (typeof value !== 'object' && typeof value !== 'function')
}

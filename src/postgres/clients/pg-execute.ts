import type { BoundStatement, Statement } from '../../store/sql-client.js';

/*
 * retrysafe's statements as SQL text, so that node-postgres' simple query can
 * carry one in the same write and round trip as BEGIN or COMMIT: `EXECUTE`
 * with the values as literals, the statement prepared once per connection by
 * SQL `PREPARE`, so PostgreSQL parses only the EXECUTE and plans nothing again.
 * Each socket write costs the process a system call that, on loopback, runs
 * the receiver's side of TCP as well: two fewer per new key.
 */

/** Above this a byte value is bound as a parameter instead: its hex literal is twice its size, to write and to read. */
export const MOST_LITERAL_BYTES = 64 * 1024;

/** SQL's prepared statements share one namespace per session with the protocol's: named apart from node-postgres' own. */
function preparedName(statement: Statement): string {
  return `${statement.name}_execute`;
}

/** The statement prepared under its SQL name, once per connection; PREPARE is not undone by a rollback. */
export function prepareText(statement: Statement): string {
  return `PREPARE ${preparedName(statement)} AS ${statement.text}`;
}

/** `EXECUTE` of the statement with its values as literals, or undefined when a value cannot be one. */
export function executeText({ statement, values }: BoundStatement): string | undefined {
  let literals = '';
  for (const value of values) {
    const literal = literalOf(value);
    if (literal === undefined) return undefined;
    literals += literals === '' ? literal : `, ${literal}`;
  }
  // PostgreSQL's grammar takes no empty parentheses.
  return values.length === 0 ? `EXECUTE ${preparedName(statement)}` : `EXECUTE ${preparedName(statement)}(${literals})`;
}

/**
 * A value as an untyped literal, which PostgreSQL reads with the input
 * function of the parameter's type, as it reads a bound text parameter. A
 * literal with a backslash is written E'…' with the backslashes doubled,
 * which means the same whatever `standard_conforming_strings` says.
 * Undefined for what a literal cannot carry the same way: a NUL character
 * (the query text ends at one), a number that is not finite, a long byte
 * value, any other type.
 */
function literalOf(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'string') return value.includes('\0') ? undefined : quoted(value);
  if (typeof value === 'number') return Number.isFinite(value) ? `'${String(value)}'` : undefined;
  if (typeof value === 'boolean' || typeof value === 'bigint') return `'${String(value)}'`;
  if (value instanceof Uint8Array && value.byteLength <= MOST_LITERAL_BYTES)
    return `E'\\\\x${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('hex')}'`;
  return undefined;
}

function quoted(text: string): string {
  const inner = text.replaceAll("'", "''");
  return text.includes('\\') ? `E'${inner.replaceAll('\\', '\\\\')}'` : `'${inner}'`;
}

import type { Statement } from '../../store/sql-client.js';

/** A statement of retrysafe's own, named so that node-postgres prepares it once per connection. */
export function statement(name: string, text: string): Statement {
  return { name, text };
}

/**
 * A parameter that carries JSON text into a json/jsonb column. Typed `text`
 * on purpose: a driver told the parameter is jsonb (postgres.js asks the
 * server) would encode the text again, and store a JSON string.
 */
export function jsonText(param: `$${number}`): string {
  return `${param}::text::jsonb`;
}

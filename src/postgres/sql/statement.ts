import type { Statement } from '../../store/sql-client.js';

/** A statement of retrysafe's own, named so that node-postgres prepares it once per connection. */
export function statement(name: string, text: string): Statement {
  return { name, text };
}

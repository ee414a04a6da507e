import { describe, expect, it } from 'vitest';
import { open, openWith, type SqlClient } from '../../src/store/sql-client.js';
import { statement } from '../../src/postgres/sql/statement.js';

const opening = { statement: statement('retrysafe_test_opening', 'SELECT 1'), values: [] };
const refused = new Error('refused before any promise');
/** A data layer's runner that throws before it returns a promise, as a driver does on arguments it rejects. */
const throwing: Pick<SqlClient, 'query'> = {
  query: () => {
    throw refused;
  },
};

describe("a transaction's opening statement", () => {
  it('comes to its failure when the runner throws at once, as when it rejects', async () => {
    await expect(open(throwing, opening)).resolves.toEqual({ error: refused });
  });

  it('hands that failure to the work rather than throwing past it', async () => {
    const sql = { ...throwing, exec: async () => {} } satisfies SqlClient;
    await expect(openWith(sql, 'tx', (_sql, _tx, opened) => Promise.resolve(opened), opening)).resolves.toEqual({
      error: refused,
    });
  });
});

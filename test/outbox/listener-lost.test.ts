import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pgListener } from '../../src/outbox/index.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { waitFor } from '../support/wait-for.js';

/** The LISTEN connection's backend goes away (failover, restart, terminated): the process stays up, the relay polls at once. */
describe('a LISTEN connection whose backend is terminated', () => {
  let db: TestDatabase;
  let admin: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
  });
  afterAll(async () => {
    await admin.end();
    await db.drop();
  });

  it('does not end the process, and wakes the relay so that polling finds what a lost notification announced', async () => {
    // No 'error' listener of the caller's own: pgListener must guard the connection it listens on.
    const client = new pg.Client({ connectionString: db.url, application_name: 'retrysafe-listen-lost' });
    await client.connect();
    let wakes = 0;
    const unlisten = await pgListener(client)(() => {
      wakes += 1;
    });
    await admin.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'retrysafe-listen-lost'",
    );
    await waitFor(() => wakes > 0, { what: 'the relay is woken' });
    // The connection is gone: unlistening reports it, it does not throw an uncaught error.
    await expect(unlisten()).rejects.toThrow();
  });
});

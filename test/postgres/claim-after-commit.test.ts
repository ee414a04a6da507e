import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Completion } from '../../src/core/completion.js';
import type { OperationIdentity } from '../../src/core/identity.js';
import { fromPg, migrate, portable, postgresStore } from '../../src/postgres/index.js';
import type { AtomicClaim, Settlement } from '../../src/store/atomic-store.js';
import { createMigratedDatabase, type TestDatabase } from '../support/database.js';

/**
 * PostgreSQL makes a commit visible before it releases the committing
 * transaction's locks. A duplicate whose claim reads the table just before the
 * first attempt commits and tries the lock just after it is released finds
 * the lock free: only a read taken after the lock tells it that a record now
 * holds the identity. Duplicates in other processes (a store each, so none
 * waits for the first attempt in-process) retry around every commit; the
 * handler must run once per key, whatever isolation the database's sessions
 * start with (retrysafe's transactions say READ COMMITTED).
 */
const ROUNDS = 300;
const DUPLICATES = 8;
const COMPLETION: Completion = {
  state: 'completed',
  reply: { status: 201, headers: {}, body: new TextEncoder().encode('{}') },
  retention: { responseSeconds: 60, tombstoneSeconds: 120 },
};

describe.each([
  ['the default isolation', {}],
  ['SERIALIZABLE by default', { default_transaction_isolation: 'serializable' }],
] as const)('on a database with %s', (_name, settings) => {
  let db: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createMigratedDatabase(settings);
    pool = new pg.Pool({ connectionString: db.url, max: DUPLICATES + 2 });
    await migrate(portable(fromPg(pool)));
  });
  afterAll(async () => {
    await pool.end();
    await db.drop();
  });

  it('a duplicate that tries the lock as the first attempt commits does not run the handler again', async () => {
    const stores = Array.from({ length: DUPLICATES + 1 }, () => postgresStore(fromPg(pool)));
    let twice = 0;
    for (let round = 0; round < ROUNDS; round += 1) {
      const identity: OperationIdentity = { tenant: 't', operation: 'orders.create@1', key: randomUUID() };
      let runs = 0;
      const attempt = (store: (typeof stores)[number]): Promise<AtomicClaim> =>
        store.atomic(
          // No wait for the lock: a duplicate answers busy at once and tries again, so claims keep arriving as the
          // first attempt commits.
          { identity, fingerprint: new Uint8Array(32), lockTimeoutMs: 0 },
          async ({ claim }): Promise<Settlement<AtomicClaim>> => {
            if (claim.kind === 'claimed') {
              runs += 1;
              await new Promise((resolve) => setTimeout(resolve, 2));
              return { commit: true, value: claim, completion: COMPLETION };
            }
            return { commit: false, value: claim };
          },
          () => ({ kind: 'busy' }),
        );
      const untilAnswered = async (store: (typeof stores)[number]): Promise<void> => {
        while ((await attempt(store)).kind === 'busy');
      };
      await Promise.all(stores.map(untilAnswered));
      if (runs !== 1) twice += 1;
    }
    expect(twice).toBe(0);
  }, 120_000);
});

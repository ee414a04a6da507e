import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { withAdmin } from './admin.js';
import { waitFor } from './wait-for.js';

/** A database of its own for one test file, dropped by `drop()`. */
export interface TestDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

/** Settings every session of a test database starts with (`ALTER DATABASE … SET`), such as `default_transaction_isolation`. */
export type DatabaseSettings = Readonly<Record<string, string>>;

/** An empty database: for tests of migrating itself, and of what runs before retrysafe's tables exist. */
export function createTestDatabase(settings: DatabaseSettings = {}): Promise<TestDatabase> {
  return create('template1', settings);
}

/**
 * A database at the latest schema, copied from the migrated template the global set-up keeps on the server (made
 * once per change of the migrations): a test pays for a copy, not for running every migration inside its budget.
 */
export function createMigratedDatabase(settings: DatabaseSettings = {}): Promise<TestDatabase> {
  return create(inject('migratedDatabaseTemplate'), settings);
}

async function create(template: string, settings: DatabaseSettings): Promise<TestDatabase> {
  const admin = inject('adminDatabaseUrl');
  const name = `retrysafe_test_${randomBytes(6).toString('hex')}`;
  await withAdmin(admin, async (client) => {
    await client.query(`CREATE DATABASE ${name} TEMPLATE ${client.escapeIdentifier(template)}`);
    for (const [setting, value] of Object.entries(settings)) {
      await client.query(
        `ALTER DATABASE ${name} SET ${client.escapeIdentifier(setting)} = ${client.escapeLiteral(value)}`,
      );
    }
  });
  const url = new URL(admin);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: () =>
      withAdmin(admin, async (client) => {
        // A pool's end() resolves before its sockets close: let them go, so FORCE has no live session to kill
        // (a killed session would surface as an unhandled error in the test that owned it).
        // Past the limit, FORCE ends what is left.
        await waitFor(
          async () =>
            (
              await client.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1', [
                name,
              ])
            ).rows[0]?.n === 0,
          { what: `the sessions of ${name} to close`, limitMs: 5000 },
        ).catch(() => undefined);
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      }),
  };
}

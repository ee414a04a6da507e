import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';

/** Longest a test holds a lock before it lets go, so that a call with no budget ends the test with a failure, not a hang. */
export const PATIENCE_MS = 10_000;

/**
 * Holds `statement` open in a transaction of its own until the returned
 * function is called, or until the test's patience runs out. On PGlite,
 * which runs one transaction at a time, every other statement waits too.
 */
export async function hold(
  database: SqlDatabase<SqlClient>,
  statement: string,
  values: readonly unknown[] = [],
): Promise<() => Promise<void>> {
  let release = (): void => {};
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  const patience = setTimeout(release, PATIENCE_MS);
  let held = (): void => {};
  const holding = new Promise<void>((resolve) => {
    held = resolve;
  });
  const transaction = database.transaction(async (sql) => {
    await sql.query(statement, values);
    held();
    await released;
  });
  await Promise.race([holding, transaction]);
  return async () => {
    clearTimeout(patience);
    release();
    await transaction;
  };
}

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/postgres/migrations/index.js';
import { unreachableDatabaseUrl } from '../observe/unreachable-database.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

describe('retrysafe migrate', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase({ migrated: false });
  });
  afterAll(() => db.close());

  const versions = migrations.map((m) => m.version);
  const latest = Math.max(...versions);

  it('creates the tables from DATABASE_URL, prints the versions it applied, and changes nothing the second time', async () => {
    const first = await retrysafe(['migrate'], { DATABASE_URL: db.url });
    expect(first.code).toBe(0);
    expect(first.stdout).toBe(`Applied versions ${versions.join(', ')}. Schema is at version ${latest}.\n`);
    const { rows } = await db.database.query<{ version: number }>(
      'SELECT version FROM retrysafe_migrations ORDER BY version',
    );
    expect(rows.map((row) => row.version)).toEqual(versions);
    expect(
      (await db.database.query("SELECT to_regclass('retrysafe_operations') IS NOT NULL AS exists")).rows[0],
    ).toEqual({ exists: true });

    // --database-url wins over DATABASE_URL.
    const again = await retrysafe(['migrate', '--json', '--database-url', db.url], {
      DATABASE_URL: await unreachableDatabaseUrl(),
    });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ applied: [], version: latest });
  });

  it('refuses a database whose schema is newer, in one line with exit code 1', async () => {
    await db.database.query("INSERT INTO retrysafe_migrations (version, name) VALUES (9999, 'from the future')");
    try {
      const run = await retrysafe(['migrate', '--database-url', db.url]);
      expect(run.code).toBe(1);
      expect(expectOneLineError(run)).toMatch(/^retrysafe migrate: The database schema is at version 9999/);
    } finally {
      await db.database.query('DELETE FROM retrysafe_migrations WHERE version = 9999');
    }
  });

  it('exits 2 without a database URL and 1 when the database cannot be reached, each with one line', async () => {
    const [missing, unreachable] = await Promise.all([
      retrysafe(['migrate']),
      retrysafe(['migrate', '--database-url', await unreachableDatabaseUrl()]),
    ]);
    expect(missing.code).toBe(2);
    expect(expectOneLineError(missing)).toBe('error: no database: set DATABASE_URL or pass --database-url <url>.');
    expect(unreachable.code).toBe(1);
    expect(expectOneLineError(unreachable)).toMatch(/^retrysafe migrate: connect ECONNREFUSED 127\.0\.0\.1:\d+\.$/);
  });
});

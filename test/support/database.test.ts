import pg from 'pg';
import { expect, it } from 'vitest';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { latestVersion, migrations } from '../../src/postgres/migrations/index.js';
import { createMigratedDatabase, createTestDatabase } from './database.js';

async function migrated(database: { readonly url: string }): Promise<Awaited<ReturnType<typeof migrate>>> {
  const pool = new pg.Pool({ connectionString: database.url, max: 1 });
  try {
    return await migrate(fromPg(pool));
  } finally {
    await pool.end();
  }
}

it('hands out migrated databases at the latest schema, each its own, with its settings', async () => {
  const [first, second] = await Promise.all([
    createMigratedDatabase({ default_transaction_isolation: 'repeatable read' }),
    createMigratedDatabase(),
  ]);
  try {
    expect(first.url).not.toBe(second.url);
    expect(await migrated(first)).toEqual({ applied: [], version: latestVersion(migrations) });
    const client = new pg.Client({ connectionString: first.url });
    await client.connect();
    try {
      expect((await client.query('SHOW default_transaction_isolation')).rows).toEqual([
        { default_transaction_isolation: 'repeatable read' },
      ]);
    } finally {
      await client.end();
    }
  } finally {
    await Promise.all([first.drop(), second.drop()]);
  }
});

it('hands out empty databases for tests of migrating', async () => {
  const empty = await createTestDatabase();
  try {
    expect((await migrated(empty)).applied).toEqual(migrations.map((migration) => migration.version));
  } finally {
    await empty.drop();
  }
});

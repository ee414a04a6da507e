import { readdir, readFile } from 'node:fs/promises';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { fromPg, migrate, portable, schemaSql } from '../../src/postgres/index.js';
import { migrations } from '../../src/postgres/migrations/index.js';
import { expectOneLineError, retrysafe } from '../cli/run-cli.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';

const folder = new URL('../../src/postgres/migrations/', import.meta.url);

describe('the schema as data', () => {
  it('lists every migration module of the folder, numbered 1, 2, 3… with the name its file has, and no SQL file', async () => {
    const files = (await readdir(folder)).filter((file) => /^\d{4}_/.test(file)).sort();
    expect(files.filter((file) => !file.endsWith('.ts'))).toEqual([]);
    expect(migrations.map((m) => `${String(m.version).padStart(4, '0')}_${m.name}.ts`)).toEqual(files);
    expect(migrations.map((m) => m.version)).toEqual(migrations.map((_, i) => i + 1));
  });

  it('is committed in docs/schema.sql exactly as `retrysafe schema` prints it (regenerate with `npm run schema`)', async () => {
    const committed = await readFile(new URL('../../docs/schema.sql', import.meta.url), 'utf8');
    expect(committed).toBe(schemaSql());
    const printed = await retrysafe(['schema']);
    expect(printed.code).toBe(0);
    expect(printed.stdout).toBe(committed);
  });

  it('prints only the newer migrations with --after, and refuses a version that is not a whole number', async () => {
    const newer = await retrysafe(['schema', '--after', '4']);
    expect(newer.stdout).toBe(schemaSql(4));
    expect(newer.stdout).not.toContain('retrysafe migration 4:');
    const refused = await retrysafe(['schema', '--after', 'latest']);
    expect(refused.code).toBe(2);
    expect(expectOneLineError(refused)).toContain("option '--after <version>' argument 'latest' is invalid");
  });
});

describe('the printed schema applied by a migration tool', () => {
  const opened: { db: TestDatabase; pool: pg.Pool }[] = [];
  const fresh = async (): Promise<pg.Pool> => {
    const db = await createTestDatabase();
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    opened.push({ db, pool });
    return pool;
  };
  afterAll(async () => {
    for (const { db, pool } of opened) {
      await pool.end();
      await db.drop();
    }
  });

  it('builds what migrate() builds, and records it: migrate() then has nothing to apply', async () => {
    const pool = await fresh();
    await pool.query(schemaSql());
    expect(await migrate(portable(fromPg(pool)))).toEqual({ applied: [], version: migrations.at(-1)?.version });
    const { rows } = await pool.query<{ version: number; name: string }>(
      'SELECT version, name FROM retrysafe_migrations ORDER BY version',
    );
    expect(rows).toEqual(migrations.map(({ version, name }) => ({ version, name })));
  });

  it('with --after, gives a database migrated that far the rest', async () => {
    const pool = await fresh();
    const database = portable(fromPg(pool));
    expect((await migrate(database, migrations.slice(0, 3))).version).toBe(3);
    await pool.query(schemaSql(3));
    expect(await migrate(database)).toEqual({ applied: [], version: migrations.at(-1)?.version });
  });
});

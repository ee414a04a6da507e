import { readFileSync } from 'node:fs';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrations } from '../../src/postgres/migrations/index.js';
import { MIGRATIONS_TABLE } from '../../src/postgres/schema.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { markdownTable } from './markdown-table.js';

const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const latest = migrations.at(-1)?.version ?? 0;

/** PostgreSQL's table lock modes that hold off writes, weakest first, as pg_locks names them and as the docs write them. */
const WRITE_BLOCKING: readonly (readonly [string, string])[] = [
  ['ShareLock', 'SHARE'],
  ['ShareRowExclusiveLock', 'SHARE ROW EXCLUSIVE'],
  ['ExclusiveLock', 'EXCLUSIVE'],
  ['AccessExclusiveLock', 'ACCESS EXCLUSIVE'],
];

/** What applying one migration did to the tables that were there before it, as the docs' table words it. */
interface Measured {
  readonly rewrites: string;
  readonly locks: string;
}

/**
 * Applies each migration in turn, each in a transaction of its own, and reads
 * before its commit which locks it holds on the tables that existed before it,
 * and after it which of them moved to a new file (a rewrite).
 */
async function measure(url: string): Promise<Map<number, Measured>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const measured = new Map<number, Measured>();
  try {
    await client.query(MIGRATIONS_TABLE);
    const files = async () =>
      new Map(
        (
          await client.query<{ name: string; file: string }>(
            "SELECT relname AS name, relfilenode::text AS file FROM pg_class WHERE relkind = 'r' AND relname LIKE 'retrysafe\\_%' AND relname <> 'retrysafe_migrations'",
          )
        ).rows.map((row) => [row.name, row.file]),
      );
    for (const migration of migrations) {
      const before = await files();
      await client.query('BEGIN');
      await client.query(migration.sql);
      const { rows } = await client.query<{ name: string; mode: string }>(
        "SELECT c.relname AS name, l.mode FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation' AND c.relkind = 'r'",
      );
      await client.query('COMMIT');
      const after = await files();
      const strongest = new Map<string, number>();
      for (const { name, mode } of rows) {
        const rank = WRITE_BLOCKING.findIndex(([held]) => held === mode);
        if (before.has(name) && rank >= 0) strongest.set(name, Math.max(rank, strongest.get(name) ?? -1));
      }
      const rewritten = [...before].filter(([name, file]) => after.get(name) !== file).map(([name]) => `\`${name}\``);
      measured.set(migration.version, {
        rewrites: rewritten.length === 0 ? 'no' : rewritten.sort().join(', '),
        locks:
          strongest.size === 0
            ? 'none'
            : [...strongest]
                .sort(([a], [b]) => a.localeCompare(b))
                .map(([name, rank]) => `\`${name}\` ${WRITE_BLOCKING[rank]?.[1] ?? ''}`)
                .join(', '),
      });
    }
  } finally {
    await client.end();
  }
  return measured;
}

describe('the schema versions in docs/operations.md', () => {
  const rows = markdownTable(doc, '#### Every migration', 'docs/operations.md');

  it('lists every migration of src/postgres/migrations, in order, by its number and name, and says what it does', () => {
    expect(rows.map((row) => [Number(row.Version), row.Name])).toEqual(
      migrations.map((migration) => [migration.version, `\`${migration.name}\``]),
    );
    for (const row of rows) expect(row['What it does'], row.Version).not.toBe('');
  });

  it('names the latest version as the current one: in its text, the example of `retrysafe migrate` and the answers of `schema --after`', () => {
    expect(doc).toContain(`This version of retrysafe's schema is at version **${latest}**`);
    expect(doc).toContain(
      `Applied versions ${migrations.map((m) => m.version).join(', ')}. Schema is at version ${latest}.`,
    );
    expect(doc).toContain(`{ "applied": [], "version": ${latest} }`);
    // What `retrysafe schema --after` answers at and past the latest version.
    expect(doc).toContain(`\`retrysafe schema: nothing after version ${latest}, this retrysafe's latest.\``);
    expect(doc).toContain(
      `\`retrysafe schema: schema-too-new: version ${latest + 1} is newer than this retrysafe's latest migration (${latest}); upgrade retrysafe to get its migrations.\``,
    );
  });

  describe('applied to PostgreSQL', () => {
    let database: TestDatabase;
    let measured: Map<number, Measured>;
    beforeAll(async () => {
      database = await createTestDatabase();
      measured = await measure(database.url);
    });
    afterAll(() => database.drop());

    it('rewrites the tables, and takes the locks that hold off writes, that the table says', () => {
      expect(
        Object.fromEntries(
          rows.map((row) => [row.Version, { rewrites: row.Rewrites, locks: row['Locks that hold off writes'] }]),
        ),
      ).toEqual(Object.fromEntries([...measured].map(([version, found]) => [String(version), found])));
    });
  });
});

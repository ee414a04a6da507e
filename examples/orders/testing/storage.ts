import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { createTestDatabase } from '../../../test/support/database.js';

/** How a storage is handed to the service process, and how a test reads its tables once the process is gone. */
export interface Storage {
  readonly env: Readonly<Record<string, string>>;
  /** The first column of the first row of `sql`, a count. */
  count(sql: string): Promise<number>;
  dispose(): Promise<void>;
}

/**
 * The service's two storages. Each gets a data directory of its own, so that
 * nothing the service keeps there (PGlite's files, the local provider's state)
 * lands in the repository.
 */
export const storages: readonly { readonly name: string; create(): Promise<Storage> }[] = [
  {
    name: 'PGlite in DATA_DIR',
    async create() {
      const dataDir = await mkdtemp(join(tmpdir(), 'orders-data-'));
      return {
        env: { DATA_DIR: dataDir },
        async count(sql) {
          // The service is stopped by then: open its files directly.
          const { PGlite } = await import('@electric-sql/pglite');
          const lite = await PGlite.create({ dataDir: join(dataDir, 'pglite') });
          try {
            return (await lite.query<{ n: number }>(sql)).rows[0]?.n ?? -1;
          } finally {
            await lite.close();
          }
        },
        dispose: () => rm(dataDir, { recursive: true, force: true }),
      };
    },
  },
  {
    name: 'PostgreSQL at DATABASE_URL',
    async create() {
      const database = await createTestDatabase();
      const dataDir = await mkdtemp(join(tmpdir(), 'orders-data-'));
      return {
        env: { DATABASE_URL: database.url, DATA_DIR: dataDir },
        async count(sql) {
          const client = new pg.Client({ connectionString: database.url });
          await client.connect();
          try {
            return (await client.query<{ n: number }>(sql)).rows[0]?.n ?? -1;
          } finally {
            await client.end();
          }
        },
        async dispose() {
          await database.drop();
          await rm(dataDir, { recursive: true, force: true });
        },
      };
    },
  },
];

import { PGlite } from '@electric-sql/pglite';
import { readFile } from 'node:fs/promises';
import pg from 'pg';
import { inject } from 'vitest';
import { fromPg, fromPGlite, migrate, portable } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { createTestDatabase } from './database.js';

/** A migrated database under test, on one engine. Every test file loops over `engines`. */
export interface Engine {
  readonly database: SqlDatabase<SqlClient>;
  /** Whether concurrent transactions really run side by side (PGlite runs them one at a time). */
  readonly concurrent: boolean;
  close(): Promise<void>;
}

export interface EngineFactory {
  readonly name: string;
  open(): Promise<Engine>;
}

/**
 * TEST_POOLER=transaction: TEST_DATABASE_URL is a pooler in transaction mode
 * (the fault suites run the contract suites through PgBouncer). Statements are
 * then not named, and PGlite, which no pooler stands in front of, is left out.
 */
const behindPooler = process.env.TEST_POOLER === 'transaction';

const allEngines: readonly EngineFactory[] = [
  {
    name: 'postgres (node-postgres)',
    async open() {
      const db = await createTestDatabase();
      const pool = new pg.Pool({ connectionString: db.url, max: 60 });
      // pool.end() resolves before its clients' sockets have closed; the forced DROP DATABASE in close()
      // can then terminate a backend still on its way out, and its FATAL would be an uncaught pool 'error'.
      pool.on('error', () => {});
      const database = portable(fromPg(pool, { preparedStatements: !behindPooler }));
      await migrate(database);
      return {
        database,
        concurrent: true,
        async close() {
          await pool.end();
          await db.drop();
        },
      };
    },
  },
  {
    name: 'pglite',
    async open() {
      // A copy of a database created once per run: creating one from scratch takes seconds.
      const lite = await PGlite.create({ loadDataDir: new Blob([await readFile(inject('pgliteTemplate'))]) });
      const database = portable(fromPGlite(lite));
      await migrate(database);
      return { database, concurrent: false, close: () => lite.close() };
    },
  },
];

export const engines: readonly EngineFactory[] = behindPooler ? allEngines.filter(({ name }) => name !== 'pglite') : allEngines;

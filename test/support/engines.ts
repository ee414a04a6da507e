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

export const engines: readonly EngineFactory[] = [
  {
    name: 'postgres (node-postgres)',
    async open() {
      const db = await createTestDatabase();
      const pool = new pg.Pool({ connectionString: db.url, max: 60 });
      // pool.end() resolves before its clients' sockets have closed; the forced DROP DATABASE in close()
      // can then terminate a backend still on its way out, and its FATAL would be an uncaught pool 'error'.
      pool.on('error', () => {});
      const database = portable(fromPg(pool));
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

import { PGlite } from '@electric-sql/pglite';
import { PrismaPg } from '@prisma/adapter-pg';
import { readFile } from 'node:fs/promises';
import { drizzle as drizzleNodePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePGlite } from 'drizzle-orm/pglite';
import { drizzle as drizzlePostgresJs } from 'drizzle-orm/postgres-js';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import postgres from 'postgres';
import { inject } from 'vitest';
import { fromDrizzle } from '../../src/postgres/clients/from-drizzle.js';
import { fromKnex } from '../../src/postgres/clients/from-knex.js';
import { fromKysely } from '../../src/postgres/clients/from-kysely.js';
import { fromPostgresJs } from '../../src/postgres/clients/from-postgres-js.js';
import { fromPrisma } from '../../src/postgres/clients/from-prisma.js';
import { fromTypeORM } from '../../src/postgres/clients/from-typeorm.js';
import { fromPg, fromPGlite, migrate, portable } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { createMigratedDatabase, type DatabaseSettings } from './database.js';
import { PrismaClient } from './prisma/generated/client.js';

/** A migrated database under test, on one engine. Every test file loops over `engines`. */
export interface Engine {
  readonly database: SqlDatabase<SqlClient>;
  /** The same database handing out the data layer's own transaction (a Kysely `Transaction`, Prisma's client, …). */
  readonly native: SqlDatabase<unknown>;
  /** Whether concurrent transactions really run side by side (PGlite runs them one at a time). */
  readonly concurrent: boolean;
  close(): Promise<void>;
}

export interface EngineFactory {
  readonly name: string;
  /** `settings`: what every session starts with, set before the data layer connects (PGlite's one session is set as it opens). */
  open(settings?: DatabaseSettings): Promise<Engine>;
}

/**
 * TEST_POOLER=transaction: TEST_DATABASE_URL is a pooler in transaction mode
 * (the fault suites run the contract suites through PgBouncer). Statements are
 * then not named, and PGlite, which no pooler stands in front of, is left out.
 */
const behindPooler = process.env.TEST_POOLER === 'transaction';

/** A data layer over a server database: its retrysafe database and how to close what it opened. */
export interface ServerLayer {
  readonly database: SqlDatabase<unknown>;
  end(): Promise<void>;
}

/** A test database of its own on the server, reached through one data layer. */
function onServer(name: string, connect: (url: string) => ServerLayer | Promise<ServerLayer>): EngineFactory {
  return {
    name,
    async open(settings) {
      const db = await createMigratedDatabase(settings);
      const layer = await connect(db.url);
      const database = portable(layer.database);
      await migrate(database);
      return {
        database,
        native: layer.database,
        concurrent: true,
        async close() {
          await layer.end();
          await db.drop();
        },
      };
    },
  };
}

/** A copy of a migrated PGlite database created once per run: creating one from scratch takes seconds. */
export async function migratedPGlite(): Promise<PGlite> {
  return PGlite.create({ loadDataDir: new Blob([await readFile(inject('pgliteTemplate'))]) });
}

function onPGlite(name: string, wrap: (lite: PGlite) => SqlDatabase<unknown>): EngineFactory {
  return {
    name,
    async open(settings = {}) {
      const lite = await migratedPGlite();
      for (const [setting, value] of Object.entries(settings))
        await lite.query('SELECT set_config($1, $2, false)', [setting, value]);
      const native = wrap(lite);
      const database = portable(native);
      await migrate(database);
      return { database, native, concurrent: false, close: () => lite.close() };
    },
  };
}

function pgPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 60 });
  // pool.end() resolves before its clients' sockets have closed; the forced DROP DATABASE in close()
  // can then terminate a backend still on its way out, and its FATAL would be an uncaught pool 'error'.
  pool.on('error', () => {});
  return pool;
}

function postgresJs(url: string): postgres.Sql {
  return postgres(url, { max: 60, onnotice: () => {} });
}

/** Data layers over a server URL the suite already has (the Citus suite's nodes), by id. */
export const serverLayers = {
  pg: (url: string): ServerLayer => {
    const pool = pgPool(url);
    return { database: fromPg(pool, { preparedStatements: !behindPooler }), end: () => pool.end() };
  },
  'postgres-js': (url: string): ServerLayer => {
    const sql = postgresJs(url);
    return { database: fromPostgresJs(sql), end: () => sql.end() };
  },
} as const;

/** Every data layer, by the id RETRYSAFE_DATA_LAYERS names it with. */
const all: Readonly<Record<string, EngineFactory>> = {
  pg: onServer('postgres (node-postgres)', serverLayers.pg),
  pglite: onPGlite('pglite', (lite) => fromPGlite(lite)),
  'postgres-js': onServer('postgres (postgres.js)', serverLayers['postgres-js']),
  kysely: onServer('postgres (kysely, node-postgres)', (url) => {
    const db = new Kysely<Record<string, never>>({ dialect: new PostgresDialect({ pool: pgPool(url) }) });
    return { database: fromKysely(db), end: () => db.destroy() };
  }),
  'drizzle-pg': onServer('postgres (drizzle, node-postgres)', (url) => {
    const pool = pgPool(url);
    return { database: fromDrizzle(drizzleNodePg({ client: pool })), end: () => pool.end() };
  }),
  'drizzle-postgres-js': onServer('postgres (drizzle, postgres.js)', (url) => {
    const sql = postgresJs(url);
    return { database: fromDrizzle(drizzlePostgresJs({ client: sql })), end: () => sql.end() };
  }),
  'drizzle-pglite': onPGlite('pglite (drizzle)', (lite) => fromDrizzle(drizzlePGlite({ client: lite }))),
  prisma: onServer('postgres (prisma, adapter-pg)', (url) => {
    const prisma = new PrismaClient({ adapter: new PrismaPg({ connectionString: url, max: 60 }) });
    // Room for the longest lock wait the suites configure (30 s) and two store budgets.
    return { database: fromPrisma(prisma, { timeout: 60_000 }), end: () => prisma.$disconnect() };
  }),
  // TypeORM and Knex are imported when selected: TypeORM alone takes about a second to load, in every test file.
  typeorm: onServer('postgres (typeorm, node-postgres)', async (url) => {
    const { DataSource } = await import('typeorm');
    const dataSource = await new DataSource({ type: 'postgres', url, poolSize: 60 }).initialize();
    return { database: fromTypeORM(dataSource), end: () => dataSource.destroy() };
  }),
  knex: onServer('postgres (knex, node-postgres)', async (url) => {
    const { default: knex } = await import('knex');
    const db = knex({ client: 'pg', connection: url, pool: { min: 0, max: 60 } });
    return { database: fromKnex(db), end: () => db.destroy() };
  }),
};

/**
 * The engines test files loop over: node-postgres and PGlite unless
 * RETRYSAFE_DATA_LAYERS says otherwise, with `all` or a comma-separated list
 * of ids (`.ci/run` runs the database suites through every data layer).
 */
export const engineIds: readonly string[] = selected(process.env.RETRYSAFE_DATA_LAYERS ?? '');

export const engines: readonly EngineFactory[] = engineIds.map((id) => {
  const factory = all[id];
  if (factory === undefined)
    throw new Error(`RETRYSAFE_DATA_LAYERS: no data layer "${id}"; known: all, ${Object.keys(all).join(', ')}.`);
  return factory;
});

function selected(setting: string): readonly string[] {
  const ids =
    setting === ''
      ? ['pg', 'pglite']
      : setting === 'all'
        ? Object.keys(all)
        : setting.split(',').map((id) => id.trim());
  return behindPooler ? ids.filter((id) => !id.includes('pglite')) : ids;
}

import { mkdir } from 'node:fs/promises';
import type pgModule from 'pg';
import { join, resolve } from 'node:path';
import { type Listener, pgListener, pgliteListener } from 'retrysafe/outbox';
import { fromPg, fromPGlite, portable, type SqlClient, type SqlDatabase } from 'retrysafe/postgres';
import type { DatabaseConfig } from './config.js';
import { ReadWritePool, splitHosts } from './read-write-pool.js';

/** An open database and how to let go of it. */
export interface OpenDatabase {
  readonly database: SqlDatabase<SqlClient>;
  /** Where the data lives, without credentials, for the start-up banner. */
  readonly description: string;
  /** Wakes the relay as soon as a message is enqueued, rather than at its next poll. */
  readonly outboxListener: Listener;
  close(): Promise<void>;
}

/**
 * Opens PostgreSQL through a node-postgres pool, or PGlite persisted on disk.
 * Each driver is loaded only when chosen, so a PostgreSQL deployment never
 * loads PGlite's WebAssembly.
 */
export async function openDatabase(config: DatabaseConfig): Promise<OpenDatabase> {
  if (config.kind === 'postgres') {
    const { default: pg } = await import('pg');
    const hosts = splitHosts(config.url);
    const open = (url: string) =>
      new pg.Pool({ connectionString: url, max: 20, connectionTimeoutMillis: 5_000, idleTimeoutMillis: 30_000 });
    const [only] = hosts;
    const pool = hosts.length === 1 && only !== undefined ? open(only.url) : new ReadWritePool(hosts, open);
    // An idle connection the server drops emits 'error' on the pool; unhandled, it would end the process.
    pool.on('error', (error) => console.error(`PostgreSQL connection lost: ${error.message}`));
    const listenUrl = () => (pool instanceof ReadWritePool ? pool.primaryUrl() : Promise.resolve(config.url));
    return {
      database: portable(fromPg(pool, { preparedStatements: config.pooler === 'none' })),
      description: `PostgreSQL at ${hosts.map(({ host }) => host).join(', ')}${new URL(only?.url ?? config.url).pathname}${config.pooler === 'none' ? '' : ', through a transaction-mode pooler'}`,
      // Behind a transaction-mode pooler a LISTEN is not kept: the relay polls.
      outboxListener: config.pooler === 'none' ? pgOutboxListener(pg, listenUrl) : polling,
      close: () => pool.end(),
    };
  }
  const directory = resolve(config.dataDir, 'pglite');
  await mkdir(directory, { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const lite = await PGlite.create({ dataDir: directory });
  return {
    database: portable(fromPGlite(lite)),
    description: `PGlite in ${join(config.dataDir, 'pglite')}`,
    outboxListener: pgliteListener(lite),
    close: () => lite.close(),
  };
}

/** LISTEN needs a connection of its own, opened only when a relay listens: a pooled one would lose the subscription. */
function pgOutboxListener(pg: typeof pgModule, url: () => Promise<string>): Listener {
  return async (wake) => {
    const listening = new pg.Client({ connectionString: await url(), connectionTimeoutMillis: 5_000 });
    listening.on('error', (error) =>
      console.error(`PostgreSQL notifications lost (${error.message}); the relay goes on polling.`),
    );
    await listening.connect();
    try {
      const unlisten = await pgListener(listening)(wake);
      return async () => {
        await unlisten().catch(() => undefined);
        await listening.end();
      };
    } catch (error) {
      await listening.end().catch(() => undefined);
      throw error;
    }
  };
}

/** A listener that never wakes the relay, which then finds new messages at its next poll. */
const polling: Listener = () => Promise.resolve(() => Promise.resolve());

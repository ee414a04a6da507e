import { afterAll, beforeAll } from 'vitest';
import { type EncryptedStoreOptions, encryptedStore, type Keyring } from '../../src/encryption/index.js';
import { idempotency, type Idempotency, type Reply } from '../../src/index.js';
import type { IncomingRequest } from '../../src/adapters/adapter/index.js';
import { runAtomic } from '../../src/modes/run-atomic.js';
import { runLeased } from '../../src/modes/run-leased.js';
import type { RetrysafeEvent } from '../../src/core/events.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import type { Engine, EngineFactory } from '../support/engines.js';

export const TENANT = 'tenant-a';

/** The columns of an operation record that encryption touches, or must leave alone. */
export interface StoredRow {
  readonly state: string;
  readonly response_body: Buffer;
  readonly response_headers: Record<string, string>;
  readonly resource_ref: string | null;
}

export interface EncryptionHarness {
  readonly database: SqlDatabase<SqlClient>;
  /** A configuration over the PostgreSQL store, encrypted with `keys` unless it is undefined. */
  config(keys: Keyring | undefined, options?: EncryptedStoreOptions): Idempotency<SqlClient>;
  /** The events every configuration reported, in order. */
  readonly events: RetrysafeEvent[];
  /** How many times a handler ran. */
  calls(): number;
  /** POST /notes in atomic mode: inserts a note and answers 201 with `text` in the body. */
  atomic(config: Idempotency<SqlClient>, key: string, text: string): Promise<Reply>;
  /** POST /messages in leased mode: answers 201 with `text` in the body. */
  leased(config: Idempotency<SqlClient>, key: string, text: string): Promise<Reply>;
  row(key: string): Promise<StoredRow | undefined>;
  /** Rows in `notes`, counted in SQL. */
  notes(): Promise<number>;
}

export function useEncryptionHarness(factory: EngineFactory): EncryptionHarness {
  let engine: Engine | undefined;
  let calls = 0;
  const events: RetrysafeEvent[] = [];
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query('CREATE TABLE notes (id serial PRIMARY KEY, tenant text NOT NULL, text text NOT NULL)');
  });
  afterAll(() => engine?.close());
  const database = (): SqlDatabase<SqlClient> => {
    if (engine === undefined) throw new Error('The engine is not open yet.');
    return engine.database;
  };
  const request = (path: string, key: string, text: string): IncomingRequest<null> => ({
    raw: null,
    method: 'POST',
    path,
    header: (name) => (name === 'idempotency-key' ? key : undefined),
    body: { text },
  });

  return {
    get database() {
      return database();
    },
    events,
    config: (keys, options) => {
      const store = postgresStore(database());
      return idempotency({
        store: keys === undefined ? store : encryptedStore(store, keys, options),
        observers: [(event) => events.push(event)],
      });
    },
    calls: () => calls,
    atomic: (config, key, text) =>
      runAtomic(
        config,
        {
          operation: 'notes.create@1',
          tenant: () => TENANT,
          handler: async ({ tx }) => {
            calls += 1;
            const { rows } = await tx.query<{ id: number }>(
              'INSERT INTO notes (tenant, text) VALUES ($1, $2) RETURNING id',
              [TENANT, text],
            );
            const id = rows[0]?.id;
            return { status: 201, headers: { location: `/notes/${id}` }, body: { id, text } };
          },
        },
        request('/notes', key, text),
      ),
    leased: (config, key, text) =>
      runLeased(
        config,
        {
          operation: 'messages.send@1',
          tenant: () => TENANT,
          handler: ({ input }) => {
            calls += 1;
            return Promise.resolve({
              status: 201,
              headers: { location: `/messages/${key}` },
              body: { sent: (input as { text: string }).text },
            });
          },
        },
        request('/messages', key, text),
      ),
    async row(key) {
      const { rows } = await database().query<StoredRow>(
        'SELECT state, response_body, response_headers, resource_ref FROM retrysafe_operations WHERE tenant = $1 AND key = $2',
        [TENANT, key],
      );
      return rows[0] === undefined ? undefined : { ...rows[0], response_body: Buffer.from(rows[0].response_body) };
    },
    async notes() {
      const { rows } = await database().query<{ n: number }>('SELECT count(*)::int AS n FROM notes');
      return rows[0]?.n ?? 0;
    },
  };
}

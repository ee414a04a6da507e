import { beforeAll, afterAll, beforeEach } from 'vitest';
import { idempotency, type Idempotency, type IdempotencyOptions } from '../../src/modes/idempotency.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import type { EngineRef } from '../adapters/harness.js';
import { type Received, send } from '../support/http.js';
import { gate } from '../support/gate.js';
import { type Framework, type ShopSettings, type ShopState } from './shop.js';

/** Settings every transparent test runs with: a 1 KiB stored-body limit, and a lease long enough that no renewal lands mid-test. */
export const SHOP_OPTIONS = { policy: { maxStoredBodyBytes: 1024 }, leaseSeconds: 60 } as const;

/** The columns of an operation record that any write would change; the lease expiry is left out since renewal moves it. */
export interface RecordSnapshot {
  readonly state: string;
  readonly mode: string;
  readonly fingerprint: Uint8Array;
  readonly owner_token: string | null;
  readonly fencing_token: number;
  readonly attempt: number;
  readonly response_status: number | null;
  readonly response_headers: Record<string, string> | null;
  readonly response_body: Uint8Array | null;
  readonly response_omitted: boolean;
  readonly resource_ref: string | null;
  readonly reason: string | null;
  readonly finished_at: Date | null;
}

export interface Shop {
  readonly url: string;
  readonly state: ShopState;
  readonly config: Idempotency<SqlClient>;
  /** How many times the route ran for `key`. */
  runs(key: string): number;
  post(key: string | undefined, body: unknown, token?: string): Promise<Received>;
  record(key: string): Promise<RecordSnapshot | undefined>;
  /** Every operation record, whatever its key. */
  records(): Promise<number>;
  /** Rows in `orders`: the route's effects. */
  orders(): Promise<number>;
  /** Moves the lease of `key` into the past, as if its process had died. */
  expireLease(key: string): Promise<void>;
}

export async function snapshot(database: Pick<SqlClient, 'query'>, key: string): Promise<RecordSnapshot | undefined> {
  const { rows } = await database.query<RecordSnapshot>(
    `SELECT state, mode, fingerprint, owner_token, fencing_token, attempt, response_status, response_headers,
            response_body, response_omitted, resource_ref, reason, finished_at
     FROM retrysafe_operations WHERE tenant = 'tenant-a' AND operation = 'orders.create@1' AND key = $1`,
    [key],
  );
  return rows[0];
}

/** Sends no Idempotency-Key when `key` is undefined. */
export function postOrder(url: string, key: string | undefined, body: unknown, token = 'token-a'): Promise<Received> {
  return send('POST', `${url}/orders`, {
    headers: { Authorization: `Bearer ${token}`, ...(key === undefined ? {} : { 'Idempotency-Key': key }) },
    body,
  });
}

/** Runs `framework`'s shop over the engine for a describe block, its route with `settings`; every test starts from empty tables. */
export function useShop(
  ref: EngineRef,
  framework: Framework,
  options: Omit<IdempotencyOptions<SqlClient>, 'store'> = SHOP_OPTIONS,
  settings: ShopSettings = {},
): Shop {
  const state: ShopState = { runs: [], errors: [], gate: opened() };
  let server: { readonly url: string; close(): Promise<void> } | undefined;
  let config: Idempotency<SqlClient> | undefined;
  beforeAll(async () => {
    config = idempotency({ ...options, store: postgresStore(ref.engine.database) });
    server = await framework.start(config, ref.engine.database, state, settings);
  });
  afterAll(() => server?.close());
  beforeEach(async () => {
    state.runs.length = 0;
    state.errors.length = 0;
    state.gate = opened();
    await ref.engine.database.query('DELETE FROM orders');
    await ref.engine.database.query('DELETE FROM retrysafe_operations');
  });
  const running = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('The shop is not running yet.');
    return value;
  };
  return {
    get url() {
      return running(server).url;
    },
    state,
    get config() {
      return running(config);
    },
    runs: (key) => state.runs.filter((run) => run === key).length,
    records: async () =>
      (await ref.engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM retrysafe_operations')).rows[0]
        ?.n ?? -1,
    post: (key, body, token) => postOrder(running(server).url, key, body, token),
    record: (key) => snapshot(ref.engine.database, key),
    orders: async () =>
      (await ref.engine.database.query<{ n: number }>('SELECT count(*)::int AS n FROM orders')).rows[0]?.n ?? -1,
    async expireLease(key) {
      await ref.engine.database.query(
        "UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second' WHERE key = $1",
        [key],
      );
    },
  };
}

function opened(): ReturnType<typeof gate> {
  const open = gate();
  open.open();
  return open;
}

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import { defaultProblemBase, type IdempotencyOptions, type ProblemCode } from '../../src/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { type AdapterFactory, ORDERS_TABLE, resetApp, type RunningApp, startApp } from '../support/apps.js';
import type { Engine, EngineFactory } from '../support/engines.js';
import { type Received, send } from '../support/http.js';

/**
 * Test files loop `describe.each(engines)` around `describe.each(adapters)`.
 * The engine is opened once per file and engine, the app once per adapter, and
 * every test starts from empty tables and a fresh invocation log.
 */
export interface EngineRef {
  readonly engine: Engine;
}

export function useEngine(factory: EngineFactory): EngineRef {
  let engine: Engine | undefined;
  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(ORDERS_TABLE);
  });
  afterAll(() => engine?.close());
  return {
    get engine() {
      if (engine === undefined) throw new Error('The engine is not open yet.');
      return engine;
    },
  };
}

export interface TestRequest {
  /** Omitted: no Idempotency-Key header. */
  readonly key?: string;
  /** Bearer token; `null` sends no Authorization header. Default `token-a`. */
  readonly token?: string | null;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly rawHeaders?: readonly (readonly [string, string])[];
}

export interface Harness {
  readonly app: RunningApp;
  readonly database: SqlDatabase<SqlClient>;
  /** False on PGlite, whose transactions run one after another. */
  readonly concurrent: boolean;
  /** How many times the handler of `operation` ran (default `orders.create@1`). */
  calls(operation?: string): number;
  send(method: string, path: string, request?: TestRequest): Promise<Received>;
  post(request: TestRequest, path?: string): Promise<Received>;
  /** Rows in `orders`, counted in SQL. */
  orders(): Promise<number>;
  /** Rows in `retrysafe_operations`. */
  records(): Promise<number>;
  record(key: string, tenant?: string, operation?: string): Promise<StoredRecord | undefined>;
}

export interface StoredRecord {
  readonly state: string;
  readonly fingerprint: Uint8Array;
  readonly response_status: number | null;
  readonly response_headers: Record<string, string> | null;
  readonly response_body: Uint8Array | null;
}

export function useApp(
  ref: EngineRef,
  adapter: AdapterFactory,
  options: Omit<IdempotencyOptions<SqlClient>, 'store'> = {},
  /** The database the app's store uses, made from the engine's: a test that watches what the store does wraps it. */
  storeDatabase: (database: SqlDatabase<SqlClient>) => SqlDatabase<SqlClient> = (database) => database,
): Harness {
  let app: RunningApp | undefined;
  beforeAll(async () => {
    app = await startApp(adapter, storeDatabase(ref.engine.database), options);
  });
  afterAll(() => app?.close());
  beforeEach(async () => {
    if (app !== undefined) await resetApp(app, ref.engine.database);
  });
  const running = (): RunningApp => {
    if (app === undefined) throw new Error('The app is not running yet.');
    return app;
  };
  const count = async (sql: string): Promise<number> =>
    (await ref.engine.database.query<{ n: number }>(sql)).rows[0]?.n ?? -1;
  const harness: Harness = {
    get app() {
      return running();
    },
    get database() {
      return ref.engine.database;
    },
    get concurrent() {
      return ref.engine.concurrent;
    },
    calls: (operation = 'orders.create@1') =>
      running().state.invocations.filter((i) => i.operation === operation).length,
    send(method, path, request = {}) {
      const token = request.token === undefined ? 'token-a' : request.token;
      return send(method, running().url + path, {
        headers: {
          ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
          ...(request.key === undefined ? {} : { 'Idempotency-Key': request.key }),
          ...request.headers,
        },
        ...(request.rawHeaders === undefined ? {} : { rawHeaders: request.rawHeaders }),
        body: request.body,
      });
    },
    post: (request, path = '/orders') => harness.send('POST', path, request),
    orders: () => count('SELECT count(*)::int AS n FROM orders'),
    records: () => count('SELECT count(*)::int AS n FROM retrysafe_operations'),
    async record(key, tenant = 'tenant-a', operation = 'orders.create@1') {
      const { rows } = await ref.engine.database.query<StoredRecord>(
        'SELECT state, fingerprint, response_status, response_headers, response_body FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3',
        [tenant, operation, key],
      );
      return rows[0];
    },
  };
  return harness;
}

/** A key no other test uses. */
export function newKey(): string {
  return randomUUID();
}

/** Asserts a problem+json answer of retrysafe's own, by status and `type`. */
export function expectProblem(res: Received, code: ProblemCode, status: number): void {
  expect({ status: res.status, type: (res.json as { type?: unknown } | undefined)?.type }).toEqual({
    status,
    type: defaultProblemBase + code,
  });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
}

/** Asserts `replay` is `original` replayed: same status, bytes, Location and Content-Type; marked; no session headers. */
export function expectReplayOf(replay: Received, original: Received): void {
  expect(replay.status).toBe(original.status);
  // latin1 maps byte to character one to one: equal strings are equal bytes.
  expect(replay.bodyBytes.toString('latin1')).toBe(original.bodyBytes.toString('latin1'));
  expect(replay.headers.location).toBe(original.headers.location);
  expect(replay.headers['content-type']).toBe(original.headers['content-type']);
  expect(replay.headers['idempotent-replayed']).toBe('true');
  expect(replay.headers['set-cookie']).toBeUndefined();
  expect(replay.headers['x-debug']).toBeUndefined();
}

/**
 * Asserts `refusal` carries nothing of the stored answer `original`: not its
 * body, not its order id. (The id alone could stand inside `"status":422`.)
 */
export function expectNothingOf(refusal: Received, original: Received): void {
  expect(refusal.bodyBytes.toString('latin1')).not.toContain(original.bodyBytes.toString('latin1'));
  expect(refusal.json).not.toHaveProperty('id');
  expect(refusal.bodyBytes.toString('latin1')).not.toContain(`"id":${(original.json as { id: number }).id}`);
  expect(refusal.headers.location).toBeUndefined();
}

/** Both ways of answering a finished operation: one read before the transaction, or the claim inside it. */
export const readChoices = [{ readBeforeClaim: 'always' }, { readBeforeClaim: 'never' }] as const;

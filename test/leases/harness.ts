import { afterAll, afterEach, beforeAll } from 'vitest';
import { providerAdmin } from '../../examples/provider/client.js';
import { type Provider, startProvider } from '../../examples/provider/provider.js';
import { leased } from '../../src/adapters/fetch/index.js';
import type { RetrysafeEvent } from '../../src/core/events.js';
import { idempotency, type Idempotency, type IdempotencyOptions } from '../../src/modes/idempotency.js';
import { downstreamKey } from '../../src/modes/downstream-key.js';
import type { LeasedRoute } from '../../src/modes/leased-route.js';
import { RecoveryWorker, type RecoveryWorkerOptions } from '../../src/leases/recovery-worker.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import type { FetchRequest } from '../../src/adapters/fetch/index.js';
import type { Engine, EngineFactory } from '../support/engines.js';
import { type Calls, noCalls, PAYMENTS_TABLE, type PaymentInput, paymentRoute } from './payment-route.js';

export const OPERATION = 'payments.create@1';

/** A payment service on one engine with a fake provider, set up afresh per test by `setUp`. */
export interface LeasedHarness {
  readonly engine: Engine;
  readonly admin: ReturnType<typeof providerAdmin>;
  readonly providerUrl: string;
  readonly config: Idempotency<SqlClient>;
  readonly calls: Calls;
  /** Every event the configuration emitted since `setUp`. */
  readonly events: RetrysafeEvent[];
  setUp(
    this: void,
    options?: Omit<Partial<IdempotencyOptions<SqlClient>>, 'store'>,
    route?: LeasedRoute<FetchRequest, PaymentInput, SqlClient>,
  ): void;
  /** `user`, when given, is sent as `x-user`, for a route scoped per user. */
  pay(this: void, key: string, body: unknown, tenant?: string, user?: string): Promise<Response>;
  state(
    this: void,
    key: string,
    tenant?: string,
  ): Promise<{ state: string; attempt: number; reason: string | null } | undefined>;
  payments(this: void, order: string): Promise<number | undefined>;
  chargeKey(this: void, key: string, tenant?: string): string;
  /** The provider charges `order` and drops its answer, and its next `lookups` lookups fail: nobody can tell that money moved. */
  hideCharge(this: void, order: string, lookups?: number): Promise<void>;
  /** Ends the lease and the wait before the next attempt, as if their time had passed. */
  expireLease(this: void, key: string): Promise<void>;
  worker(this: void, options?: Omit<Partial<RecoveryWorkerOptions<SqlClient>>, 'config'>): RecoveryWorker<SqlClient>;
}

export function useLeasedHarness(factory: EngineFactory): LeasedHarness {
  let engine: Engine | undefined;
  let provider: Provider | undefined;
  let config: Idempotency<SqlClient> | undefined;
  let calls: Calls = noCalls();
  let events: RetrysafeEvent[] = [];
  let pay: ((request: Request, context: undefined) => Promise<Response>) | undefined;

  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(PAYMENTS_TABLE);
    provider = await startProvider();
  });
  afterAll(async () => {
    await provider?.close();
    await engine?.close();
  });
  afterEach(() => harness.admin.control({ mode: 'reset' }));

  const defined = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`${what} is not ready: call setUp in the test.`);
    return value;
  };
  const request = (key: string, body: unknown, tenant: string, user: string | undefined): Request =>
    new Request('http://service.test/payments', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'idempotency-key': key,
        'x-tenant': tenant,
        ...(user === undefined ? {} : { 'x-user': user }),
      },
      body: JSON.stringify(body),
    });

  const harness: LeasedHarness = {
    get engine() {
      return defined(engine, 'the engine');
    },
    get admin() {
      return providerAdmin(defined(provider, 'the provider').url);
    },
    get providerUrl() {
      return defined(provider, 'the provider').url;
    },
    get config() {
      return defined(config, 'the configuration');
    },
    get calls() {
      return calls;
    },
    get events() {
      return events;
    },
    setUp(options = {}, route) {
      calls = noCalls();
      events = [];
      const recorded = events;
      config = idempotency({
        store: postgresStore(harness.engine.database),
        ...options,
        observers: [...(options.observers ?? []), (event) => recorded.push(event)],
      });
      pay = leased(config, route ?? paymentRoute(harness.providerUrl, calls));
    },
    pay: (key, body, tenant = 'tenant-a', user) =>
      defined(pay, 'the route')(request(key, body, tenant, user), undefined),
    async state(key, tenant = 'tenant-a') {
      const { rows } = await harness.engine.database.query<{ state: string; attempt: number; reason: string | null }>(
        'SELECT state, attempt, reason FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3',
        [tenant, OPERATION, key],
      );
      return rows[0];
    },
    async payments(order) {
      return (
        await harness.engine.database.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM payments WHERE order_id = $1',
          [order],
        )
      ).rows[0]?.n;
    },
    chargeKey: (key, tenant = 'tenant-a') => downstreamKey({ tenant, operation: OPERATION, key }, 'charge'),
    async hideCharge(order, lookups = 1) {
      await harness.admin.control({ mode: 'charge-then-drop', reference: order });
      await harness.admin.control({ mode: 'fail-lookup', times: lookups });
    },
    async expireLease(key) {
      await harness.engine.database.query(
        "UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second', not_before = NULL WHERE key = $1 AND state = 'in_progress'",
        [key],
      );
    },
    worker: (options = {}) =>
      new RecoveryWorker({
        config: harness.config,
        operations: [paymentRoute(harness.providerUrl, calls)],
        ...options,
      }),
  };
  return harness;
}

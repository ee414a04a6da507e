import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { atomic, type FetchRequest, leased } from '../../src/adapters/fetch/index.js';
import type { Observer } from '../../src/core/events.js';
import { idempotency } from '../../src/modes/idempotency.js';
import type { OperationIdentity } from '../../src/core/identity.js';
import type { AtomicRoute } from '../../src/core/route.js';
import type { Tracing } from '../../src/core/tracing.js';
import type { LeasedRoute } from '../../src/modes/leased-route.js';
import { RecoveryWorker } from '../../src/leases/recovery-worker.js';
import { fromPg, portable, postgresStore } from '../../src/postgres/index.js';
import type { OperationStore } from '../../src/store/operation-store.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import type { Engine } from '../support/engines.js';
import { countingHeldClaims } from '../support/held-claims.js';
import { unreachableDatabaseUrl } from './unreachable-database.js';
import { waitFor } from '../support/wait-for.js';

export const NOTES = 'notes.create@1';
export const PAYMENTS = 'payments.create@1';

/** Everything a scenario sent that must never reach a metric label or a log line. */
export interface Secrets {
  readonly tenants: string[];
  readonly keys: string[];
  readonly bodyValues: string[];
  /** The first operation, to check its hash in the logs. */
  readonly first: OperationIdentity;
}

interface Note {
  readonly note: string;
  /** Keeps the transaction open a moment, so that a duplicate overlaps it. */
  readonly pause?: boolean;
  readonly hold?: boolean;
  readonly fail?: boolean;
}

/**
 * Runs the main paths once each, through real routes on the engine's database: a new
 * operation, a replay, a mismatch, a duplicate behind a running lease
 * (conflict), a store that cannot be reached, a worker fenced out after a
 * recovery worker took its lease over, and an outcome marked unknown. Every
 * tenant, key and body value is fresh and recorded.
 */
export async function runScenarios(
  { database, concurrent }: Pick<Engine, 'database' | 'concurrent'>,
  observers: readonly Observer[],
  wrap: (store: OperationStore<SqlClient>) => OperationStore<SqlClient> = (store) => store,
  tracing?: Tracing,
): Promise<Secrets> {
  const secrets = { tenants: [] as string[], keys: [] as string[], bodyValues: [] as string[] };
  const fresh = (list: string[], prefix: string): string => {
    const value = `${prefix}-${randomUUID()}`;
    list.push(value);
    return value;
  };
  const config = (options: { maxAttempts?: number; database?: SqlDatabase<SqlClient> } = {}) =>
    idempotency({
      store: wrap(postgresStore(options.database ?? database)),
      observers,
      maxAttempts: options.maxAttempts,
      tracing,
    });
  const request = (tenant: string, key: string, body: Note): Request =>
    new Request('http://notes.test/notes', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-tenant': tenant },
      body: JSON.stringify(body),
    });

  const watched = countingHeldClaims(database);
  const notes: AtomicRoute<FetchRequest, Note, SqlClient> = {
    operation: NOTES,
    tenant: ({ request: r }) => r.headers.get('x-tenant') ?? undefined,
    async handler({ input }) {
      // Until the duplicate finds the identity held, so that it waits on this attempt whatever the machine's load.
      // PGlite runs one transaction at a time: no duplicate reaches it meanwhile, so there it does not wait.
      if (input.pause === true && concurrent && watched.held() === 0) await watched.nextHeld();
      return { status: 201, headers: { location: `/notes/${randomUUID()}` }, body: { echo: input.note } };
    },
  };
  let gate: () => void = () => {};
  let held = false;
  const payments: LeasedRoute<FetchRequest, Note, SqlClient> = {
    operation: PAYMENTS,
    tenant: ({ request: r }) => r.headers.get('x-tenant') ?? undefined,
    async handler({ input, attempt, step }) {
      const charge = await step('charge', async () => {
        if (input.hold === true && attempt === 1) {
          held = true;
          await new Promise<void>((resolve) => (gate = resolve));
        }
        return { charged: input.note };
      });
      if (input.fail === true) throw new Error(`the provider refused ${input.note}`);
      return { status: 201, body: charge };
    },
  };
  const createNote = atomic(config({ database: watched.database }), notes);
  const pay = leased(config(), payments);

  // New and a duplicate sent at the same time: one runs, the other waits behind it (on a server
  // that runs transactions side by side, a lock wait) and replays it. Then a mismatch.
  const tenant = fresh(secrets.tenants, 'tenant');
  const key = fresh(secrets.keys, 'key');
  const body = { note: fresh(secrets.bodyValues, 'body'), pause: true };
  await Promise.all([
    expectStatus(createNote(request(tenant, key, body), undefined), 201),
    expectStatus(createNote(request(tenant, key, body), undefined), 201),
  ]);
  await expectStatus(createNote(request(tenant, key, { note: fresh(secrets.bodyValues, 'body') }), undefined), 422);

  // A duplicate while the first attempt holds its lease, then that attempt fenced out by a recovery worker.
  const payer = fresh(secrets.tenants, 'tenant');
  const payKey = fresh(secrets.keys, 'key');
  const payment = { note: fresh(secrets.bodyValues, 'body'), hold: true };
  const stale = pay(request(payer, payKey, payment), undefined);
  await waitFor(() => Promise.resolve(held));
  await expectStatus(pay(request(payer, payKey, payment), undefined), 409);
  await database.query(
    "UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second' WHERE key = $1",
    [payKey],
  );
  await new RecoveryWorker({ config: config(), operations: [payments] }).runOnce();
  gate();
  await expectStatus(stale, 409);

  // The last attempt fails after a step: unknown.
  const unknownPay = leased(config({ maxAttempts: 1 }), payments);
  await expectStatus(
    unknownPay(
      request(fresh(secrets.tenants, 'tenant'), fresh(secrets.keys, 'key'), {
        note: fresh(secrets.bodyValues, 'body'),
        fail: true,
      }),
      undefined,
    ),
    409,
  );

  // The store cannot be reached: 503.
  const pool = new pg.Pool({ connectionString: await unreachableDatabaseUrl() });
  pool.on('error', () => {});
  try {
    const downNotes = atomic(config({ database: portable(fromPg(pool)) }), notes);
    await expectStatus(
      downNotes(
        request(fresh(secrets.tenants, 'tenant'), fresh(secrets.keys, 'key'), {
          note: fresh(secrets.bodyValues, 'body'),
        }),
        undefined,
      ),
      503,
    );
  } finally {
    await pool.end();
  }
  return { ...secrets, first: { tenant, operation: NOTES, key } };
}

async function expectStatus(answer: Promise<Response>, status: number): Promise<void> {
  const response = await answer;
  if (response.status !== status)
    throw new Error(`expected ${status}, got ${response.status}: ${await response.text()}`);
}

import type { Context } from 'hono';
import { Hono } from 'hono';
import pg from 'pg';
import { expectTypeOf } from 'vitest';
import {
  type ExpiredLeases,
  idempotency,
  type Lease,
  type LeaseClaims,
  type LeasedOperation,
  type LeasedWrites,
  type LeaseRenewal,
  type LeaseStore,
  type SqlDatabase,
  type UnknownActions,
} from 'retrysafe';
import { atomic, type FetchRequest } from 'retrysafe/fetch';
import { fromPg, type OperationDetails, postgresStore, type PgClientLike } from 'retrysafe/postgres';

// Checked by `tsc` and `vitest --typecheck` (both part of npm test); nothing here runs.

const database = fromPg(new pg.Pool());
// The client type named explicitly, as code written for earlier versions does, still types the same.
expectTypeOf(fromPg<pg.PoolClient>(new pg.Pool())).toEqualTypeOf<SqlDatabase<pg.PoolClient>>();
expectTypeOf(database).toEqualTypeOf<SqlDatabase<pg.PoolClient>>();

// A pool of one's own keeps its client type too.
interface TracedClient extends PgClientLike {
  readonly trace: string;
}
declare const traced: TracedClient;
expectTypeOf(
  fromPg({ connect: () => Promise.resolve(traced), query: () => Promise.resolve({ rows: [] }) }),
).toEqualTypeOf<SqlDatabase<TracedClient>>();

const config = idempotency({ store: postgresStore(database) });

// Typed rows under strict and noUncheckedIndexedAccess, with the user's guard.
type Env = { Variables: { tenant: string } };
const createOrder = atomic(config, {
  operation: 'orders.create@1',
  tenant: ({ context }: FetchRequest<Context<Env>>) => context.get('tenant'),
  async handler({ tx, tenant }) {
    expectTypeOf(tx).toEqualTypeOf<pg.PoolClient>();
    const { rows } = await tx.query<{ id: string }>('INSERT INTO orders (tenant) VALUES ($1) RETURNING id', [tenant]);
    const order = rows[0];
    if (order === undefined) throw new Error('no row');
    expectTypeOf(order.id).toEqualTypeOf<string>();
    return { status: 201, body: order };
  },
});
expectTypeOf(createOrder).toEqualTypeOf<(request: Request, context: Context<Env>) => Promise<Response>>();

const app = new Hono<Env>();
app.post('/orders', (c) => createOrder(c.req.raw, c));

// A step's result is typed by its call, not widened by a reconcile that may find nothing.
interface Charge {
  readonly id: string;
}
declare function findCharge(key: string): Promise<Charge | undefined>;
export const payment: LeasedOperation<{ amount: number }, pg.PoolClient> = {
  operation: 'payments.create@1',
  async handler({ step }) {
    const paid = await step('charge', () => Promise.resolve<Charge>({ id: 'ch_1' }), {
      async reconcile(call) {
        const found = await findCharge(call.idempotencyKey);
        return found === undefined ? { found: false } : { found: true, result: found };
      },
    });
    expectTypeOf(paid).toEqualTypeOf<Charge>();
    return { status: 201, body: paid };
  },
};

// `inspect()` lists a step that was started and never finished (what `retrysafe stuck` points at): it has a start and no finish.
declare const details: OperationDetails;
const [firstStep] = details.steps;
if (firstStep !== undefined) {
  expectTypeOf(firstStep.startedAt).toEqualTypeOf<Date>();
  expectTypeOf(firstStep.finishedAt).toEqualTypeOf<Date | undefined>();
}

// The store handed out serves each of LeaseStore's parts and the operators' actions on unknown operations,
// so a caller typed by the part it uses takes it; the actions are no part of the lease seam.
expectTypeOf(config.store).toMatchTypeOf<LeaseClaims>();
expectTypeOf(config.store).toMatchTypeOf<LeaseRenewal>();
expectTypeOf(config.store).toMatchTypeOf<LeasedWrites<pg.PoolClient>>();
expectTypeOf(config.store).toMatchTypeOf<ExpiredLeases>();
expectTypeOf(config.store).toMatchTypeOf<UnknownActions>();
expectTypeOf<LeaseRenewal>().not.toMatchTypeOf<UnknownActions>();
expectTypeOf<LeaseStore<pg.PoolClient>>().not.toMatchTypeOf<Pick<UnknownActions, 'retryUnknown'>>();
expectTypeOf<LeaseStore<pg.PoolClient>>().not.toMatchTypeOf<Pick<UnknownActions, 'resolveUnknown'>>();

// A lease carries the length it was taken with: renewing writes take the lease alone, not a length per call.
expectTypeOf<Lease['leaseSeconds']>().toEqualTypeOf<number>();
expectTypeOf<LeaseRenewal['renew']>().parameters.toEqualTypeOf<[Lease]>();
expectTypeOf<LeasedWrites<pg.PoolClient>['startStep']>().parameters.toEqualTypeOf<[Lease, string]>();
expectTypeOf<LeasedWrites<pg.PoolClient>['checkpoint']>().parameters.toEqualTypeOf<[Lease, string, unknown]>();

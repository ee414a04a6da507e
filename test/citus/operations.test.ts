import { randomUUID } from 'node:crypto';
import { beforeAll, expect, it } from 'vitest';
import { runOperatorAction } from '../../src/operator/operator-actions.js';
import { enqueue, Relay, webhookTransport } from '../../src/outbox/index.js';
import { fromPg } from '../../src/postgres/index.js';
import { isRetrysafeError } from '../../src/core/errors.js';
import { RecoveryWorker } from '../../src/leases/recovery-worker.js';
import { maintenanceStore } from '../../src/postgres/index.js';
import { operatorStore } from '../../src/postgres/postgres-operator-store.js';
import { Sweeper } from '../../src/retention/sweeper.js';
import { expectOneLineError, retrysafe } from '../cli/run-cli.js';
import { useLeasedHarness } from '../leases/harness.js';
import { paymentRoute } from '../leases/payment-route.js';
import { type CitusCluster, describeCitus, nodePool, sharedCitusCluster } from '../support/citus-cluster.js';
import { startWebhookSink } from '../outbox/support/webhook-sink.js';
import { citusEngine, distributeWithRecords } from './citus-engine.js';

const OPERATION = 'payments.create@1';
/** Safety net only, for tests that start `retrysafe` processes on a busy machine. */
const CLI_LIMIT_MS = 300_000;
const SECRET = `whsec_${Buffer.from('citus outbox secret').toString('base64')}`;

/** The worker holding `tenant`'s shard of `table`, and that shard's table name there. */
async function shardOf(cluster: CitusCluster, table: string, tenant: string) {
  const [row] = await cluster.coordinator.query<{ port: number; shard: string }>(
    `SELECT nodeport AS port, shard_name AS shard FROM citus_shards
     WHERE table_name = $1::regclass AND shardid = get_shard_id_for_distribution_column($1, $2::text)`,
    [table, tenant],
  );
  const worker = cluster.workers.find((node) => node.port === row?.port);
  if (row === undefined || worker === undefined) throw new Error(`no worker holds ${tenant}'s shard of ${table}`);
  return { worker, shard: row.shard };
}

describeCitus('leased mode, recovery, operators and the sweeper on Citus', () => {
  const cluster = sharedCitusCluster();
  const service = useLeasedHarness(citusEngine(cluster));
  const { setUp, state, payments, chargeKey, expireLease } = service;
  beforeAll(() => distributeWithRecords(service.engine.database, 'payments'));

  it("charges once through a leased route, replays the answer byte for byte, and keeps record and steps on the tenant's worker", async () => {
    setUp();
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1299 };
    const first = await service.pay(key, body);
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    const again = await service.pay(key, body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await again.text()).toBe(firstBody);
    expect(await service.admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
    expect(service.calls).toEqual({ charge: 1, reconcile: 0, record: 1, staleRefused: 0 });

    for (const table of ['retrysafe_operations', 'retrysafe_steps', 'payments']) {
      const { worker, shard } = await shardOf(cluster(), table, 'tenant-a');
      const [row] = await worker.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${shard} WHERE tenant = $1`, [
        'tenant-a',
      ]);
      expect(row?.n, `${table} on port ${worker.port}`).toBeGreaterThan(0);
    }
  });

  it('lets exactly one of two racing recovery workers take an expired lease over, and it finishes the payment', async () => {
    setUp({ leaseSeconds: 30 });
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 300 };
    await service.admin.control({ mode: 'fail-before-charge', reference: body.order });
    await expect(service.pay(key, body)).rejects.toThrow('provider unavailable');
    expect((await state(key))?.state).toBe('in_progress');
    await expireLease(key);
    const workers = [0, 1].map(
      () => new RecoveryWorker({ config: service.config, operations: [paymentRoute(service.providerUrl)] }),
    );
    const reports = await Promise.all(workers.map((worker) => worker.runOnce()));
    expect(reports.reduce((n, report) => n + report.completed, 0)).toBe(1);
    expect(await service.admin.count(chargeKey(key))).toBe(1);
    expect(await payments(body.order)).toBe(1);
    expect(await state(key)).toMatchObject({ state: 'completed', attempt: 2 });
  });

  it(
    "lists an unknown operation to operators and the command line, and resolves it through the console's action",
    async () => {
      setUp({ maxAttempts: 2 });
      const key = randomUUID();
      const body = { order: `ord-${key}`, amount: 400 };
      await service.admin.control({ mode: 'fail-before-charge', reference: body.order, times: 5 });
      await service.admin.control({ mode: 'fail-lookup', times: 5 });
      await expect(service.pay(key, body)).rejects.toThrow();
      await expireLease(key);
      expect((await service.pay(key, body)).status).toBe(409);
      expect((await state(key))?.state).toBe('unknown');

      const identity = { tenant: 'tenant-a', operation: OPERATION, key };
      const operators = operatorStore(service.engine.database);
      const page = await operators.list({ state: 'unknown', limit: 50 });
      const listed = page.items.find((item) => item.identity.key === key);
      expect(listed).toMatchObject({ state: 'unknown', identity });
      const byKey = await operators.list({
        tenant: 'tenant-a',
        operation: OPERATION,
        key: { match: 'exact', key },
        limit: 5,
      });
      expect(byKey.items.map((item) => item.identity)).toEqual([identity]);
      const anyOperation = await operators
        .list({ key: { match: 'exact', key }, limit: 5 })
        .catch((error: unknown) => error);
      expect(isRetrysafeError(anyOperation, 'misuse')).toBe(true);
      expect(String(anyOperation)).toMatch(
        /search by key without an operation cannot run .*recursive.*Name the operation/,
      );
      const url = cluster().coordinator.url();
      const stuck = await retrysafe(['stuck', '--json', '--database-url', url]);
      expect(stuck.code).toBe(0);
      expect(stuck.stdout).toContain(key);

      const result = await runOperatorAction(
        { config: service.config, operators },
        {
          action: 'resolve',
          identity,
          seen: { state: 'unknown', fencingToken: listed?.fencingToken ?? -1 },
          state: 'failed',
          status: 402,
          body: { error: 'not charged' },
        },
        { actor: 'on-call', reason: 'the provider has no charge for this key' },
      );
      expect(result).toEqual({ done: true });
      const replay = await service.pay(key, body);
      expect(replay.status).toBe(402);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      const view = await operators.operation(identity);
      expect(view?.actions.map((action) => [action.action, action.actor])).toEqual([['resolve', 'on-call']]);
      const inspect = await retrysafe(['inspect', 'tenant-a', OPERATION, key, '--database-url', url]);
      expect(inspect.code).toBe(0);
      expect(inspect.stdout).toContain('failed');
    },
    CLI_LIMIT_MS,
  );

  it(
    'refuses to sweep with a misuse error that names the reason, in the Sweeper and in `retrysafe sweep`',
    async () => {
      const refusal = await new Sweeper({ store: maintenanceStore(service.engine.database) }).runOnce().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isRetrysafeError(refusal, 'misuse')).toBe(true);
      expect(String(refusal)).toMatch(/FOR UPDATE SKIP LOCKED .*ctid.*Citus/);
      const run = await retrysafe(['sweep', '--database-url', cluster().coordinator.url()]);
      expect(run.code).not.toBe(0);
      expect(expectOneLineError(run)).toMatch(/sweeper cannot run on this database/);
    },
    CLI_LIMIT_MS,
  );

  it('commits an order with its outbox message by two-phase commit, since distribute() makes the outbox a reference table; an order alone in one phase', async () => {
    const { coordinator } = cluster();
    await service.engine.database.query(
      'CREATE TABLE orders (tenant text NOT NULL, id text NOT NULL, PRIMARY KEY (tenant, id))',
    );
    await distributeWithRecords(service.engine.database, 'orders');
    // What the coordinator sends the workers, as notices on the session that sends it.
    const pool = nodePool(coordinator.url(), 2);
    const commands: string[] = [];
    pool.on('connect', (client) => {
      client.on('notice', (notice) => commands.push(notice.message ?? ''));
      void client.query("SET citus.log_remote_commands = on; SET client_min_messages = 'log'");
    });
    const database = fromPg(pool);
    const order = async (id: string, message: boolean) => {
      commands.length = 0;
      await database.transaction(async (tx) => {
        await tx.query('INSERT INTO orders (tenant, id) VALUES ($1, $2)', ['tenant-a', id]);
        if (message) await enqueue(tx, { topic: 'orders.created', payload: { id } });
      });
      return commands.filter((command) => /^issuing (COMMIT|PREPARE TRANSACTION|COMMIT PREPARED)/.test(command));
    };
    const phases = (sent: readonly string[]) => sent.map((command) => command.split(/[ ;']/).slice(1, 3).join(' '));
    try {
      const [kind] = await coordinator.query<{ method: string }>(
        "SELECT partmethod AS method FROM pg_dist_partition WHERE logicalrelid = 'retrysafe_outbox'::regclass",
      );
      expect(kind?.method).toBe('n');
      // An order alone: one shard, one worker, committed there in one phase.
      expect(phases(await order('alone', false))).toEqual(['COMMIT']);
      // With a message: the order's worker and every node holding the outbox's replica prepare, then commit the
      // prepared transactions: one atomic commit, never the order without its message (Citus raises
      // max_prepared_transactions itself when it is left at 0).
      const withMessage = phases(await order('two-phase', true));
      expect(withMessage.length).toBeGreaterThan(0);
      expect(new Set(withMessage)).toEqual(new Set(['PREPARE TRANSACTION', 'COMMIT PREPARED']));
      const [setting] = await cluster().workers[0].query<{ max_prepared_transactions: string }>(
        'SHOW max_prepared_transactions',
      );
      expect(Number(setting?.max_prepared_transactions)).toBeGreaterThan(0);
      // And an order without a message still commits in one phase.
      expect(phases(await order('alone-again', false))).toEqual(['COMMIT']);
    } finally {
      await pool.end();
    }

    const sink = await startWebhookSink();
    try {
      const relay = new Relay({
        database: service.engine.database,
        transport: webhookTransport({ url: sink.url, secrets: SECRET }),
      });
      // The message committed with its order, delivered from the coordinator's replica.
      expect(await relay.runOnce()).toMatchObject({ claimed: 1, delivered: 1, failed: 0 });
      expect(sink.deliveries).toHaveLength(1);
    } finally {
      await sink.close();
    }
  });
});

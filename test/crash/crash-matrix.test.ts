import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { providerAdmin } from '../../examples/provider/client.js';
import { type Provider, startProvider } from '../../examples/provider/provider.js';
import type { CrashPoint } from '../../src/core/crash-point.js';
import { downstreamKey } from '../../src/leases/downstream-key.js';
import { fromPg, migrate } from '../../src/postgres/index.js';
import { type Child, runProgram, startProgram } from '../support/child.js';
import { createTestDatabase, type TestDatabase } from '../support/database.js';
import { engineIds } from '../support/engines.js';
import { PAYMENTS_TABLE } from '../leases/payment-route.js';
import { retrysafe } from '../cli/run-cli.js';

const SERVER = 'test/crash/programs/server.ts';
const RECOVER = 'test/crash/programs/recover.ts';

interface Answer {
  readonly status: number;
  readonly body: string;
  readonly headers: Headers;
}

/** node-postgres and Drizzle on node-postgres, as RETRYSAFE_DATA_LAYERS selects them (`.ci/run`); node-postgres by default. */
const chosen = engineIds.filter((id) => id === 'pg' || id === 'drizzle-pg');
const layers = chosen.length > 0 ? chosen : ['pg'];

describe.each(layers)('crash matrix through %s: the service killed with SIGKILL at each named point', (layer) => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let provider: Provider;
  let admin: ReturnType<typeof providerAdmin>;
  const children: Child[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url });
    await migrate(fromPg(pool));
    await pool.query(PAYMENTS_TABLE);
    await pool.query('CREATE TABLE orders (id serial PRIMARY KEY, tenant text NOT NULL, sku text NOT NULL)');
    provider = await startProvider();
    admin = providerAdmin(provider.url);
  });
  afterAll(async () => {
    await Promise.all(children.map((child) => child.kill()));
    await provider.close();
    await pool.end();
    await db.drop();
  });

  const env = (extra: Record<string, string> = {}): Record<string, string> => ({ DATABASE_URL: db.url, PROVIDER_URL: provider.url, LEASE_SECONDS: '2', DATA_LAYER: layer, ...extra });
  async function service(extra: Record<string, string> = {}): Promise<{ url: string; child: Child }> {
    const child = await startProgram(SERVER, env(extra), /^listening (\S+)/);
    children.push(child);
    return { url: child.match[1] ?? '', child };
  }
  const send = async (url: string, path: string, key: string, body: unknown): Promise<Answer> => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': key, 'x-tenant': 'tenant-a', connection: 'close' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: await response.text(), headers: response.headers };
  };
  /** A client that keeps its key and retries until it gets an answer that is not "in progress". */
  async function retryUntilSettled(url: string, path: string, key: string, body: unknown): Promise<Answer> {
    for (let attempt = 0; attempt < 60; attempt += 1) {
      const answer = await send(url, path, key, body);
      if (answer.status !== 409 || !answer.body.includes('operation-in-progress')) return answer;
      await sleep(Number(answer.headers.get('retry-after') ?? 1) * 500);
    }
    throw new Error('the operation never settled');
  }
  const record = async (operation: string, key: string) =>
    (await pool.query<{ state: string; response_body: Buffer | null; response_status: number | null }>(
      'SELECT state, response_body, response_status FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3',
      ['tenant-a', operation, key],
    )).rows[0];
  const count = async (sql: string, value: string) => (await pool.query<{ n: number }>(sql, [value])).rows[0]?.n;

  async function crashAt(point: CrashPoint, path: string, key: string, body: unknown): Promise<void> {
    const crashing = await service({ RETRYSAFE_CRASH_AT: point });
    await expect(send(crashing.url, path, key, body)).rejects.toThrow();
    expect((await crashing.child.exited).signal).toBe('SIGKILL');
  }

  const leasedPoints: readonly CrashPoint[] = [
    'before-claim',
    'after-claim',
    'before-step-call',
    'after-step-call',
    'after-checkpoint',
    'before-local-commit',
    'after-local-commit',
    'before-finish',
    'after-finish',
    'while-serialising',
  ];
  it.each(leasedPoints)('leased payment killed at %s: one charge, one payment, a terminal record equal to the final answer', async (point) => {
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 2500 };
    await crashAt(point, '/payments', key, body);
    const restarted = await service();
    const final = await retryUntilSettled(restarted.url, '/payments', key, body);
    expect(final.status).toBe(201);
    const stored = await record('payments.create@1', key);
    expect(stored?.state).toBe('completed');
    expect(stored?.response_body?.toString()).toBe(final.body);
    expect(await admin.count(downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge'))).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', body.order)).toBe(1);
    await restarted.child.kill();
  });

  it('killed after the charge while the provider cannot be asked: unknown, then settled by an operator and replayed', async () => {
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 2700 };
    await crashAt('after-step-call', '/payments', key, body);
    const charge = downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge');
    await admin.control({ mode: 'fail-lookup', reference: charge, times: 5 });
    const restarted = await service({ MAX_ATTEMPTS: '1' });
    const stopped = await retryUntilSettled(restarted.url, '/payments', key, body);
    expect(stopped.status).toBe(409);
    expect(stopped.body).toContain('outcome-unknown');
    expect((await record('payments.create@1', key))?.state).toBe('unknown');
    expect(await count('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', body.order)).toBe(0);

    const settled = await retrysafe(
      ['resolve', 'tenant-a', 'payments.create@1', key, '--state', 'completed', '--status', '201', '--body', '{"charged":true}', '--reason', 'charge found in the provider dashboard'],
      { DATABASE_URL: db.url },
    );
    expect(settled.code).toBe(0);
    const replay = await send(restarted.url, '/payments', key, body);
    expect(replay.status).toBe(201);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(JSON.parse(replay.body)).toEqual({ charged: true });
    expect(await admin.count(charge)).toBe(1);
    await restarted.child.kill();
  });

  const atomicPoints: readonly CrashPoint[] = ['before-claim', 'after-claim', 'before-commit', 'after-commit', 'while-serialising'];
  it.each(atomicPoints)('atomic order killed at %s: one order, a completed record equal to the final answer', async (point) => {
    const key = randomUUID();
    const sku = `sku-${key}`;
    await crashAt(point, '/orders', key, { sku });
    const restarted = await service();
    const final = await retryUntilSettled(restarted.url, '/orders', key, { sku });
    expect(final.status).toBe(201);
    expect((await record('orders.create@1', key))?.response_body?.toString()).toBe(final.body);
    expect(await count('SELECT count(*)::int AS n FROM orders WHERE sku = $1', sku)).toBe(1);
    await restarted.child.kill();
  });

  it('two recovery workers racing on one expired lease: exactly one finishes it', async () => {
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 800 };
    await crashAt('after-step-call', '/payments', key, body);
    await sleep(2500);
    const reports = (await Promise.all([runProgram(RECOVER, env()), runProgram(RECOVER, env())])).map((out) => JSON.parse(out) as { finished: number; lost: number });
    expect(reports.reduce((n, report) => n + report.finished, 0)).toBe(1);
    expect((await record('payments.create@1', key))?.state).toBe('completed');
    expect(await admin.count(downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge'))).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', body.order)).toBe(1);
  });

  it('a worker paused past its lease (SIGSTOP, SIGCONT) is fenced out after a recoverer took over', async () => {
    const key = randomUUID();
    const body = { order: `ord-${key}`, amount: 1200 };
    const paused = await service();
    await admin.control({ mode: 'delay', ms: 4000, reference: body.order, times: 1 });
    const before = (await admin.stats()).requests;
    const answer = send(paused.url, '/payments', key, body);
    while ((await admin.stats()).requests === before) await sleep(20);
    paused.child.process.kill('SIGSTOP');
    await sleep(2500);
    const report = JSON.parse(await runProgram(RECOVER, env())) as { finished: number };
    expect(report.finished).toBe(1);
    paused.child.process.kill('SIGCONT');
    const staleAnswer = await answer;
    expect(staleAnswer.status).toBe(409);
    const stored = await record('payments.create@1', key);
    expect(stored?.state).toBe('completed');
    const replay = await send(paused.url, '/payments', key, body);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body).toBe(stored?.response_body?.toString());
    expect(await admin.count(downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge'))).toBe(1);
    expect(await count('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', body.order)).toBe(1);
    await paused.child.kill();
  });
});

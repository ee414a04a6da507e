import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { startProcess } from '../testing/child.js';
import { placeOrder } from '../testing/checkout.js';
import { call, json } from '../testing/http.js';
import { emailRows, outboxRows, paidAt } from '../testing/messaging-rows.js';
import { A } from '../testing/service.js';
import { waitFor } from '../../../test/support/wait-for.js';

describe(
  'the service as a process without a broker: its own relay, consumer, provider and webhook worker',
  { timeout: 240_000 },
  () => {
    let database: TestDatabase;
    let pool: pg.Pool;
    let dataDir: string;
    beforeAll(async () => {
      database = await createTestDatabase();
      pool = new pg.Pool({ connectionString: database.url });
      pool.on('error', () => {});
      dataDir = await mkdtemp(join(tmpdir(), 'orders-data-'));
    });
    afterAll(async () => {
      await pool?.end();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    /** Sessions of the service whose last statement subscribed to the outbox channel (`retrysafe_outbox`, docs/messaging.md). */
    const listeners = async (): Promise<number> =>
      (
        await pool.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND query = $1',
          ['LISTEN retrysafe_outbox'],
        )
      ).rows[0]?.n ?? -1;

    it('confirms a new order once by email, and marks it paid once the local provider’s webhook comes back to the service', async () => {
      const service = await startProcess({ DATABASE_URL: database.url, DATA_DIR: dataDir });
      try {
        expect(service.output()).toContain('order confirmations: sent by this process, no broker');
        expect(service.output()).toContain(
          `provider webhooks: ${service.url}/webhooks/provider, signed with a secret made for this run`,
        );
        expect(service.output()).not.toMatch(/whsec_/);
        // The relay is woken by LISTEN on a connection of its own, rather than waiting for its next poll.
        await waitFor(async () => (await listeners()) === 1, { what: 'the relay listens for new outbox messages' });

        const order = await placeOrder(service.url, A, 'l-one');
        // The consumer commits the email before the relay marks the message delivered, so each is awaited.
        await waitFor(async () => (await outboxRows(pool, order.id))[0]?.state === 'delivered', {
          what: 'the relay marked the confirmation delivered',
        });
        expect(await emailRows(pool, order.id)).toEqual([{ tenant: A.tenant, kind: 'order-confirmation' }]);
        expect(await outboxRows(pool, order.id)).toMatchObject([{ state: 'delivered' }]);

        const payment = await call(service.url, 'POST', `/v1/orders/${order.id}/payments`, {
          token: A.token,
          key: 'pay-l-one',
        });
        expect(payment.status).toBe(201);
        const read = async () =>
          json(await call(service.url, 'GET', `/v1/orders/${order.id}`, { token: A.token })).paid_at;
        await waitFor(async () => (await read()) !== null, { what: 'the order is paid' });
        expect(await read()).toBe((await paidAt(pool, order.id))?.toISOString());
        const { rows } = await pool.query<{ state: string }>(
          "SELECT state FROM retrysafe_webhook_events WHERE receiver = 'provider'",
        );
        expect(rows).toEqual([{ state: 'processed' }]);

        expect(await service.kill('SIGTERM')).toBe(0);
        expect(await emailRows(pool, order.id)).toHaveLength(1);
        await waitFor(async () => (await listeners()) === 0, { what: 'the listening connection was closed' });
      } finally {
        await service.kill('SIGKILL');
      }
    });
  },
);

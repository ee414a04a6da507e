import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import amqp from 'amqplib';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runProgram, startProgram } from '../../../test/outbox/support/child-program.js';
import { broker } from '../../../test/support/brokers.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { CONFIRMATION_CONSUMER } from './order-confirmation.js';
import { startProcess } from '../testing/child.js';
import { placeOrder } from '../testing/checkout.js';
import { startCuttingProxy } from '../testing/cutting-proxy.js';
import { emailRows, inboxCount, outboxRows } from '../testing/messaging-rows.js';
import { A, B } from '../testing/service.js';
import { waitFor } from '../../../test/support/wait-for.js';

const rabbit = await broker('RabbitMQ');
const CONSUMER = 'examples/orders/messaging/consumer.ts';

describe.skipIf(!rabbit.reachable)(
  'order confirmations through RabbitMQ, with consumer.ts as a process of its own',
  { timeout: 240_000 },
  () => {
    let database: TestDatabase;
    let pool: pg.Pool;
    let dataDir: string;
    let env: Record<string, string>;
    let admin: amqp.ChannelModel;
    let channel: amqp.Channel;
    beforeAll(async () => {
      database = await createTestDatabase();
      pool = new pg.Pool({ connectionString: database.url });
      pool.on('error', () => {});
      dataDir = await mkdtemp(join(tmpdir(), 'orders-data-'));
      const suffix = randomBytes(6).toString('hex');
      // An exchange and a queue of this run's own; NATS_URL is cleared so that the environment cannot add a second broker.
      env = {
        DATABASE_URL: database.url,
        AMQP_URL: rabbit.url,
        AMQP_EXCHANGE: `orders-test-${suffix}`,
        AMQP_QUEUE: `order-confirmations-test-${suffix}`,
        NATS_URL: '',
      };
      admin = await amqp.connect(rabbit.url);
      channel = await admin.createChannel();
    });
    afterAll(async () => {
      await channel?.deleteQueue(env.AMQP_QUEUE ?? '');
      await channel?.deleteExchange(env.AMQP_EXCHANGE ?? '');
      await admin?.close();
      await pool?.end();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    const waiting = async () => (await channel.checkQueue(env.AMQP_QUEUE ?? '')).messageCount;

    it('a consumer killed after its commit, before its ack: the message comes back, and the restarted consumer sends no second email', async () => {
      const service = await startProcess({ ...env, DATA_DIR: dataDir });
      try {
        expect(service.output()).toContain(`order confirmations: published to RabbitMQ exchange ${env.AMQP_EXCHANGE}`);
        const order = await placeOrder(service.url, A, 'b-crash');
        // The service's relay publishes to RabbitMQ; nobody consumes yet.
        await waitFor(async () => (await outboxRows(pool, order.id))[0]?.state === 'delivered', {
          what: 'the relay published the message',
        });
        const [message] = await outboxRows(pool, order.id);
        const messageId = message?.id ?? '';
        expect(await waiting()).toBe(1);
        expect(await emailRows(pool, order.id)).toEqual([]);

        const crashed = await runProgram(CONSUMER, { ...env, RETRYSAFE_CRASH_AT: 'consumer-after-commit' }, 'SIGKILL');
        expect(crashed.records()).toEqual([{ ready: true, broker: 'amqp' }]);
        expect(await emailRows(pool, order.id)).toEqual([{ tenant: A.tenant, kind: 'order-confirmation' }]);
        // Never acknowledged: the broker puts it back once it sees the connection gone.
        await waitFor(async () => (await waiting()) === 1, { what: 'the message is back in the queue' });

        const restarted = startProgram(CONSUMER, env);
        try {
          await waitFor(() => restarted.records().some((record) => (record as { kind?: string }).kind !== undefined), {
            what: 'the redelivery was settled',
          });
          expect(restarted.records()).toContainEqual({ kind: 'duplicate', id: messageId });
        } finally {
          expect(await restarted.kill('SIGTERM')).toBe(0);
        }
        expect(await emailRows(pool, order.id)).toEqual([{ tenant: A.tenant, kind: 'order-confirmation' }]);
        expect(await inboxCount(pool, CONFIRMATION_CONSUMER, messageId)).toBe(1);
        expect(await waiting()).toBe(0);
        expect(await service.kill('SIGTERM')).toBe(0);
      } finally {
        await service.kill('SIGKILL');
      }
    });

    it('the service reconnects to RabbitMQ after its connection is cut, and the relay then publishes what waited in the outbox', async () => {
      const target = new URL(rabbit.url);
      const proxy = await startCuttingProxy({ host: target.hostname, port: Number(target.port || 5672) });
      const throughProxy = new URL(rabbit.url);
      throughProxy.hostname = '127.0.0.1';
      throughProxy.port = String(proxy.port);
      const service = await startProcess({ ...env, AMQP_URL: throughProxy.toString(), DATA_DIR: dataDir });
      try {
        const before = await placeOrder(service.url, B, 'b-before-cut');
        await waitFor(async () => (await outboxRows(pool, before.id))[0]?.state === 'delivered', {
          what: 'the first message was published',
        });
        proxy.cut();
        const after = await placeOrder(service.url, B, 'b-after-cut');
        await waitFor(async () => (await outboxRows(pool, after.id))[0]?.state === 'delivered', {
          what: 'the second message was published after the reconnect',
        });

        const consumer = startProgram(CONSUMER, env);
        try {
          await waitFor(
            async () =>
              (await emailRows(pool, after.id)).length === 1 && (await emailRows(pool, before.id)).length === 1,
            { what: 'both orders were confirmed' },
          );
        } finally {
          expect(await consumer.kill('SIGTERM')).toBe(0);
        }
        expect(consumer.records()).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'processed' })]));
        expect(await waiting()).toBe(0);
        expect(await service.kill('SIGTERM')).toBe(0);
      } finally {
        await service.kill('SIGKILL');
        await proxy.close();
      }
    });
  },
);

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProgram } from '../../../test/outbox/support/child-program.js';
import { broker } from '../../../test/support/brokers.js';
import { createTestDatabase, type TestDatabase } from '../../../test/support/database.js';
import { CONFIRMATION_CONSUMER } from './order-confirmation.js';
import { startProcess } from '../testing/child.js';
import { placeOrder } from '../testing/checkout.js';
import { emailRows, inboxCount, outboxRows } from '../testing/messaging-rows.js';
import { B } from '../testing/service.js';
import { waitFor } from '../../../test/support/wait-for.js';

const nats = await broker('NATS');
const CONSUMER = 'examples/orders/messaging/consumer.ts';

describe.skipIf(!nats.reachable)(
  'order confirmations through NATS JetStream, with consumer.ts as a process of its own',
  { timeout: 240_000 },
  () => {
    let database: TestDatabase;
    let pool: pg.Pool;
    let dataDir: string;
    let env: Record<string, string>;
    let connection: NatsConnection;
    beforeAll(async () => {
      database = await createTestDatabase();
      pool = new pg.Pool({ connectionString: database.url });
      pool.on('error', () => {});
      dataDir = await mkdtemp(join(tmpdir(), 'orders-data-'));
      // A stream of this run's own; AMQP_URL is cleared so that the environment cannot add a second broker.
      env = {
        DATABASE_URL: database.url,
        NATS_URL: nats.url,
        NATS_STREAM: `ORDERS_TEST_${randomBytes(6).toString('hex')}`,
        AMQP_URL: '',
      };
      connection = await connect({ servers: nats.url });
    });
    afterAll(async () => {
      await (await jetstreamManager(connection)).streams.delete(env.NATS_STREAM ?? '').catch(() => false);
      await connection?.close();
      await pool?.end();
      await database?.drop();
      await rm(dataDir, { recursive: true, force: true });
    });

    it('the service publishes into the stream, and the consumer sends one email and acknowledges it', async () => {
      const service = await startProcess({ ...env, DATA_DIR: dataDir });
      try {
        expect(service.output()).toContain(`order confirmations: published to JetStream stream ${env.NATS_STREAM}`);
        const order = await placeOrder(service.url, B, 'j-one');
        await waitFor(async () => (await outboxRows(pool, order.id))[0]?.state === 'delivered', {
          what: 'the relay published the message',
        });
        const messageId = (await outboxRows(pool, order.id))[0]?.id ?? '';

        const consumer = startProgram(CONSUMER, env);
        try {
          await waitFor(() => consumer.records().some((record) => (record as { kind?: string }).kind !== undefined), {
            what: 'the message was settled',
          });
          expect(consumer.records()).toEqual([
            { ready: true, broker: 'nats' },
            { kind: 'processed', id: messageId },
          ]);
        } finally {
          expect(await consumer.kill('SIGTERM')).toBe(0);
        }
        expect(await emailRows(pool, order.id)).toEqual([{ tenant: B.tenant, kind: 'order-confirmation' }]);
        expect(await inboxCount(pool, CONFIRMATION_CONSUMER, messageId)).toBe(1);
        // The ack is sent without waiting for the server, which counts it in a loop of its own.
        const manager = await jetstreamManager(connection);
        await waitFor(
          async () => {
            const durable = await manager.consumers.info(env.NATS_STREAM ?? '', 'order-confirmations');
            return durable.num_pending === 0 && durable.num_ack_pending === 0;
          },
          { what: 'the server counted the ack' },
        );
        expect(await service.kill('SIGTERM')).toBe(0);
      } finally {
        await service.kill('SIGKILL');
      }
    });
  },
);

import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { enqueue, type Listener, pgListener, pgliteListener, Relay, webhookTransport } from '../../src/outbox/index.js';
import { fromPg, fromPGlite, migrate, portable } from '../../src/postgres/index.js';
import type { SqlClient, SqlDatabase } from '../../src/store/sql-client.js';
import { createMigratedDatabase } from '../support/database.js';
import { migratedPGlite } from '../support/engines.js';
import { startWebhookSink, type WebhookSink } from './support/webhook-sink.js';
import { waitFor } from '../support/wait-for.js';

const SECRET = `whsec_${Buffer.from('wake-up test secret').toString('base64')}`;

interface Listening {
  readonly database: SqlDatabase<SqlClient>;
  readonly listen: Listener;
  close(): Promise<void>;
}

const setups: readonly { readonly name: string; open(): Promise<Listening> }[] = [
  {
    name: 'node-postgres, LISTEN on a dedicated client',
    async open() {
      const db = await createMigratedDatabase();
      const pool = new pg.Pool({ connectionString: db.url });
      // The forced DROP DATABASE can end an idle client still closing after pool.end(); that is no failure.
      pool.on('error', () => {});
      const listener = new pg.Client({ connectionString: db.url });
      await listener.connect();
      const database = portable(fromPg(pool));
      await migrate(database);
      return {
        database,
        listen: pgListener(listener),
        async close() {
          await listener.end();
          await pool.end();
          await db.drop();
        },
      };
    },
  },
  {
    name: 'PGlite',
    async open() {
      // The run's migrated template: a new PGlite of its own would run every migration again.
      const lite = await migratedPGlite();
      const database = portable(fromPGlite(lite));
      await migrate(database);
      return { database, listen: pgliteListener(lite), close: () => lite.close() };
    },
  },
];

describe.each(setups)('a running relay on $name', { timeout: 60_000 }, (setup) => {
  let listening: Listening;
  let sink: WebhookSink;

  beforeAll(async () => {
    listening = await setup.open();
    sink = await startWebhookSink();
  });
  afterAll(async () => {
    await sink.close();
    await listening.close();
  });

  it('wakes when a message is enqueued, long before its next poll', async () => {
    const relay = new Relay({
      database: listening.database,
      transport: webhookTransport({ url: sink.url, secrets: SECRET }),
      listen: listening.listen,
      // Far longer than the test may take: only the notification can bring the message out in time.
      idleMs: 10 * 60_000,
      onReport: () => (passes += 1),
    });
    let passes = 0;
    const stop = new AbortController();
    const running = relay.run(stop.signal);
    try {
      // The first pass found nothing: the relay goes to rest.
      await waitFor(() => passes > 0, { what: 'the first pass' });
      const id = await listening.database.transaction((tx) =>
        enqueue(tx, { topic: 'orders.created', payload: { order: 1 } }),
      );
      await waitFor(() => sink.deliveries.length > 0, { what: 'the message was delivered' });
      expect(sink.deliveries.map((delivery) => delivery.headers['webhook-id'])).toEqual([id]);
      await waitFor(
        async () =>
          (await listening.database.query<{ state: string }>('SELECT state FROM retrysafe_outbox WHERE id = $1', [id]))
            .rows[0]?.state === 'delivered',
        { what: 'it was marked delivered' },
      );
    } finally {
      stop.abort();
      await running;
    }
  });
});

import { randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { encryptedStore, keyring } from '../../src/encryption/index.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { postgresStore } from '../../src/postgres/postgres-store.js';
import { insertRecord } from '../retention/records.js';
import { engines } from '../support/engines.js';
import { act, drawPage, OPERATOR, useConsole } from './console-http.js';

/**
 * What the console's pages say and to whom: every row's reason field named
 * after its row for a screen reader, the activity table captioned, and a
 * stored body shown only when the console allows it, never as ciphertext.
 */
describe.each(engines)('the console’s pages on $name', (factory) => {
  const ref = useConsole(factory);
  const db = () => ref.engine.database;
  const serve = ref.serve;

  describe('for a screen reader', () => {
    it('names each dead letter’s reason field after its message, under the visible label "Reason"', async () => {
      const ids = [randomUUID(), randomUUID()];
      for (const id of ids)
        await db().query(
          `INSERT INTO retrysafe_outbox (id, topic, payload, state, attempts, last_error, parked_at)
           VALUES ($1, 'orders.created', '{}', 'dead', 8, 'broker refused: 503', now())`,
          [id],
        );
      const page = await drawPage(`${ref.base}/dead-letters`, OPERATOR);
      const fields = [...page.matchAll(/<label>Reason<input name="reason" required aria-label="([^"]*)"><\/label>/g)];
      expect(fields.map(([, name]) => name).sort()).toEqual(
        ids.map((id) => `Reason for requeueing message ${id}`).sort(),
      );
      expect(page).not.toMatch(/<label>Reason<input name="reason" required><\/label>/);
    });

    it('names each parked webhook event’s reason field after its event and receiver', async () => {
      for (const [receiver, id] of [
        ['payments', 'evt_2xGk9'],
        ['shipping', 'evt_2xGk9'],
        ['payments', 'evt_<b>&"'],
      ])
        await db().query(
          `INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, state, attempts, last_error, parked_at)
           VALUES ($1, $2, '{}', now(), 'dead', 8, 'Error: the ledger is closed', now())`,
          [receiver, id],
        );
      const page = await drawPage(`${ref.base}/webhook-events`, OPERATOR);
      const fields = [...page.matchAll(/<label>Reason<input name="reason" required aria-label="([^"]*)"><\/label>/g)];
      expect(fields.map(([, name]) => name).sort()).toEqual(
        [
          'Reason for requeueing event evt_2xGk9 of payments',
          'Reason for requeueing event evt_2xGk9 of shipping',
          // Escaped like every value the page shows.
          'Reason for requeueing event evt_&lt;b&gt;&amp;&quot; of payments',
        ].sort(),
      );
    });

    it('captions the table of activity under the charts, for the period shown', async () => {
      const base = ref.base;
      for (const [query, period] of [
        ['', 'the last 24 hours'],
        ['?hours=168', 'the last 7 days'],
      ] as const)
        expect(await drawPage(`${base}/${query}`, OPERATOR)).toContain(
          `<details><summary>The same numbers as a table</summary>\n<table><caption>Activity per hour over ${period} (hours without any are left out)</caption><thead>`,
        );
    });
  });

  describe('stored bodies', () => {
    const key = 'order-with-body';
    const identity = { tenant: 'tenant-a', operation: 'orders.create@1', key };
    const pageOf = (base: string, extra: Record<string, string> = {}) =>
      `${base}/operation?${new URLSearchParams({ ...identity, ...extra }).toString()}`;
    // What insertRecord stores as a finished record's body.
    const BODY = JSON.stringify({ key });

    it('stay hidden when the console does not show bodies, even when the page is asked for one', async () => {
      await insertRecord(db(), { key, state: 'completed' });
      const base = ref.base;
      for (const url of [pageOf(base), pageOf(base, { body: 'show' })]) {
        const page = await drawPage(url, OPERATOR);
        expect(page).toContain(`<dt>Stored body</dt><dd>${Buffer.byteLength(BODY)} bytes</dd>`);
        expect(page).not.toContain('Show the stored body');
        expect(page).not.toContain('<h2>Stored body</h2>');
        expect(page).not.toContain('order-with-body&quot;}');
        expect(page).not.toContain(Buffer.from(BODY).toString('base64'));
      }
    });

    it('show when the console shows bodies and the operator asks', async () => {
      await insertRecord(db(), { key, state: 'completed' });
      const base = await serve({ showBodies: true });
      const page = await drawPage(pageOf(base), OPERATOR);
      expect(page).toContain('Show the stored body');
      expect(page).not.toContain('<h2>Stored body</h2>');
      expect(await drawPage(pageOf(base, { body: 'show' }), OPERATOR)).toContain(
        '<h2>Stored body</h2><pre>{&quot;key&quot;:&quot;order-with-body&quot;}</pre>',
      );
    });

    it('show only for the operations the console’s function allows, and only when asked', async () => {
      await insertRecord(db(), { key, state: 'completed' });
      const other = { ...identity, operation: 'payments.create@1' };
      await insertRecord(db(), { ...other, state: 'completed' });
      const base = await serve({ showBodies: ({ operation }) => operation === 'orders.create@1' });
      expect(await drawPage(pageOf(base, { body: 'show' }), OPERATOR)).toContain('<h2>Stored body</h2><pre>');
      const hidden = await drawPage(
        `${base}/operation?${new URLSearchParams({ ...other, body: 'show' }).toString()}`,
        OPERATOR,
      );
      expect(hidden).not.toContain('Show the stored body');
      expect(hidden).not.toContain('<h2>Stored body</h2>');
      expect(hidden).not.toContain('order-with-body&quot;}');
    });

    it('say a body an encrypting store sealed is encrypted, rather than show its ciphertext', async () => {
      const keys = keyring({ current: '2026-12', keys: { '2026-12': randomBytes(32) } });
      const config = idempotency({ store: encryptedStore(postgresStore(db()), keys) });
      await insertRecord(db(), { key, state: 'unknown', mode: 'leased' });
      const base = await serve({ config, showBodies: true });
      // Resolved through the console: the application's store seals the body.
      const done = await act(pageOf(base), 'resolve', { reason: 'found by hand', body: '{"card":"4242"}' }, OPERATOR);
      expect(done.status).toBe(303);
      const { rows } = await db().query<{ sealed: boolean }>(
        `SELECT substring(response_body FROM 1 FOR 4) = '\\x52534531'::bytea AS sealed FROM retrysafe_operations WHERE key = $1`,
        [key],
      );
      expect(rows).toEqual([{ sealed: true }]);
      const page = await drawPage(pageOf(base, { body: 'show' }), OPERATOR);
      expect(page).toContain(
        '<h2>Stored body</h2><p class="muted" role="note">Encrypted at rest (<code>encryptedStore</code>, key <code>2026-12</code>): the console does not decrypt it, and shows no ciphertext.',
      );
      expect(page).not.toContain('base64:');
      expect(page).not.toContain('<pre>');
      expect(page).not.toContain('4242');
    });
  });
});

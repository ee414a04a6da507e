import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backingOffPayment, insertRecord, unknownPayment } from '../retention/records.js';
import { type CliDatabase, openCliDatabase } from '../cli/cli-database.js';
import { retrysafe } from '../cli/run-cli.js';
import { markdownTable } from './markdown-table.js';

const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const alerts = readFileSync(new URL('../../monitoring/retrysafe-alerts.yml', import.meta.url), 'utf8');
const rows = markdownTable(doc, '## On-call runbook', 'docs/operations.md');

/** The commands of a cell, in order: its code spans that run `retrysafe`. */
const commandsOf = (cell: string) => [...cell.matchAll(/`(retrysafe [^`]+)`/g)].map(([, command = '']) => command);

/** A command's words as a shell splits them: double quotes keep spaces. */
const words = (command: string) =>
  [...command.matchAll(/"([^"]*)"|(\S+)/g)].map(([, quoted, bare]) => quoted ?? bare ?? '');

/** The application's module of leased operations, which the runbook names: the tests' stands in for it. */
const MODULE = 'test/cli/recovery-module.ts';

/**
 * docs/operations.md's on-call runbook: every alert of monitoring/ and every
 * kind `retrysafe stuck` lists has its row, and every command it gives runs
 * as written, in the table's order, against a database in the state its row
 * describes.
 */
describe('the on-call runbook in docs/operations.md', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
    const payment = (key: string) => ({ tenant: 'tenant-a', operation: 'payments.create@1', key });
    await db.database.query(
      'CREATE TABLE recovered_payments (key text PRIMARY KEY, charge text NOT NULL, amount integer NOT NULL)',
    );
    await insertRecord(db.database, {
      ...payment('8e03978e-40d5'),
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: -60,
      input: { amount: 1299 },
    });
    await backingOffPayment(db.database, payment('5b7e2a10-9c3f'), 6, 'provider unavailable (503)');
    await unknownPayment(db.database, payment('c41d7a2e'), 'the provider did not answer the charge');
    await unknownPayment(db.database, payment('9f20b6d1'), 'the provider lookup failed');
    await insertRecord(db.database, { key: 'swept', state: 'completed', responseExpiresIn: -60 });
    await db.database.query(
      `INSERT INTO retrysafe_outbox (id, topic, payload, state, attempts, last_error, parked_at)
       VALUES ('0193a5f2-8c1e-7d40-9b2a-5e6f7a8b9c0d', 'orders.created', '{}', 'dead', 8, 'broker refused: 503',
         '2026-12-03T15:13:06.512337Z')`,
    );
    await db.database.query(
      `INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, state, attempts, last_error, parked_at)
       VALUES ('payments', 'evt_2xGk9', '{}', now(), 'dead', 8, 'Error: the ledger is closed', '2026-12-03T15:13:06.512337Z')`,
    );
  });
  afterAll(() => db.close());

  it('has a row for every alert of monitoring/ and every kind `retrysafe stuck` lists', () => {
    const seen = rows.map((row) => row['What you see'] ?? '').join('\n');
    const named = [...alerts.matchAll(/- alert: (\w+)/g)].map(([, alert = '']) => alert);
    expect(named.length).toBeGreaterThan(0);
    for (const shown of [...named, 'expired-lease', 'backing-off', 'unknown'])
      expect(seen, `a row for ${shown}`).toContain(`\`${shown}\``);
  });

  it.each(rows.map((row) => [row['What you see'] ?? '', row.Run ?? '']))(
    'runs what it gives for: %s',
    async (_seen, run) => {
      for (const command of commandsOf(run)) {
        const args = words(command)
          .slice(1)
          .map((word) => (word === 'dist/recovery.js' ? MODULE : word));
        const ran = await retrysafe(args, { DATABASE_URL: db.url });
        expect(ran.stderr, command).toBe('');
        expect(ran.code, command).toBe(0);
      }
    },
  );

  it('left each operation and message where its row says: finished, resumed, requeued, swept, or untouched', async () => {
    const states = await db.database.query<{ key: string; state: string }>(
      'SELECT key, state FROM retrysafe_operations ORDER BY key',
    );
    expect(Object.fromEntries(states.rows.map((row) => [row.key, row.state]))).toEqual({
      '5b7e2a10-9c3f': 'in_progress',
      '8e03978e-40d5': 'completed',
      '9f20b6d1': 'in_progress',
      c41d7a2e: 'completed',
      swept: 'tombstone',
    });
    const outbox = await db.database.query<{ state: string }>('SELECT state FROM retrysafe_outbox');
    const events = await db.database.query<{ state: string }>('SELECT state FROM retrysafe_webhook_events');
    expect([...outbox.rows, ...events.rows]).toEqual([{ state: 'pending' }, { state: 'received' }]);
  });
});

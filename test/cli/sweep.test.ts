import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRecord, recordsByKey } from '../retention/records.js';
import { unreachableDatabaseUrl } from '../observe/unreachable-database.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

describe('retrysafe sweep', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
  });
  afterAll(() => db.close());

  it('makes one pass of the sweeper in batches of --batch-size and reports what it did', async () => {
    for (let i = 0; i < 5; i++)
      await insertRecord(db.database, { key: `expired-${i}`, state: 'completed', responseExpiresIn: -1 });
    await insertRecord(db.database, { key: 'old-tombstone', state: 'tombstone', expiresIn: -1 });
    await insertRecord(db.database, { key: 'fresh', state: 'completed' });
    await insertRecord(db.database, {
      key: 'unknown',
      state: 'unknown',
      mode: 'leased',
      responseExpiresIn: -1,
      expiresIn: -1,
    });

    const run = await retrysafe(['sweep', '--batch-size', '2', '--json'], { DATABASE_URL: db.url });

    expect(run.code).toBe(0);
    // Tombstones: 2, 2, 1; deletions: 1.
    expect(JSON.parse(run.stdout)).toEqual({ tombstoned: 5, deleted: 1, batches: 4 });
    const rows = await recordsByKey(db.database);
    expect([...rows.values()].filter((row) => row.key.startsWith('expired-')).map((row) => row.state)).toEqual(
      Array(5).fill('tombstone'),
    );
    expect(rows.has('old-tombstone')).toBe(false);
    expect(rows.get('fresh')?.state).toBe('completed');
    expect(rows.get('unknown')?.state).toBe('unknown');

    const again = await retrysafe(['sweep'], { DATABASE_URL: db.url });
    expect(again.stdout).toBe('Tombstoned 0 expired responses and deleted 0 expired tombstones in 2 batches.\n');
  });

  it('deletes expired tombstones when turning responses into tombstones fails, and names the failed step (1)', async () => {
    await db.database.query('DELETE FROM retrysafe_operations');
    await insertRecord(db.database, { key: 'expired-response', state: 'completed', responseExpiresIn: -1 });
    await insertRecord(db.database, { key: 'expired-tombstone', state: 'tombstone', expiresIn: -1 });
    await db.database.query(
      `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$`,
    );
    await db.database.query(
      'CREATE TRIGGER refuse BEFORE UPDATE ON retrysafe_operations FOR EACH ROW EXECUTE FUNCTION refuse()',
    );
    try {
      const run = await retrysafe(['sweep'], { DATABASE_URL: db.url });
      expect(run.code).toBe(1);
      expect(run.stdout).toBe('Tombstoned 0 expired responses and deleted 1 expired tombstone in 1 batches.\n');
      expect(run.stderr).toMatch(
        /^retrysafe sweep: turning expired responses into tombstones failed: The operation store failed: refused\.\n$/,
      );
    } finally {
      await db.database.query('DROP TRIGGER refuse ON retrysafe_operations');
      await db.database.query('DROP FUNCTION refuse()');
    }
    const rows = await recordsByKey(db.database);
    expect(rows.get('expired-response')?.state).toBe('completed');
    expect(rows.has('expired-tombstone')).toBe(false);
    await db.database.query('DELETE FROM retrysafe_operations');
  });

  /** Old and fresh rows in each messaging table; only the old finished ones may be pruned. */
  async function messagingRows(): Promise<void> {
    await db.database.query(`
      INSERT INTO retrysafe_outbox (id, topic, payload, state, created_at, delivered_at) VALUES
        ('00000000-0000-4000-8000-000000000001', 'orders', '{}', 'delivered', now() - interval '3 days', now() - interval '2 days'),
        ('00000000-0000-4000-8000-000000000002', 'orders', '{}', 'delivered', now() - interval '3 days', now() - interval '1 hour'),
        ('00000000-0000-4000-8000-000000000003', 'orders', '{}', 'pending', now() - interval '3 days', NULL)`);
    await db.database.query(`
      INSERT INTO retrysafe_webhook_events (receiver, id, payload, sent_at, state, processed_at) VALUES
        ('provider', 'old', '{}', now() - interval '10 days', 'processed', now() - interval '10 days'),
        ('provider', 'waiting', '{}', now() - interval '10 days', 'received', NULL)`);
    await db.database.query(`
      INSERT INTO retrysafe_inbox (consumer, message_id, processed_at) VALUES
        ('emails', 'old', now() - interval '10 days'),
        ('emails', 'recent', now() - interval '1 hour')`);
  }

  const remaining = async (): Promise<Record<string, string[]>> => ({
    outbox: (await db.database.query<{ id: string }>('SELECT id FROM retrysafe_outbox ORDER BY id')).rows.map((r) =>
      r.id.slice(-1),
    ),
    webhooks: (await db.database.query<{ id: string }>('SELECT id FROM retrysafe_webhook_events ORDER BY id')).rows.map(
      (r) => r.id,
    ),
    inbox: (
      await db.database.query<{ message_id: string }>('SELECT message_id FROM retrysafe_inbox ORDER BY message_id')
    ).rows.map((r) => r.message_id),
  });

  it('prunes the messaging tables it is asked to, after the sweep, and says how many rows went', async () => {
    await messagingRows();
    const run = await retrysafe(
      [
        'sweep',
        '--outbox-older-than',
        '86400',
        '--webhooks-older-than',
        '86400',
        '--inbox-older-than',
        '604800',
        '--json',
      ],
      {
        DATABASE_URL: db.url,
      },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      tombstoned: 0,
      deleted: 0,
      batches: 2,
      pruned: { outbox: 1, webhooks: 1, inbox: 1 },
    });
    expect(await remaining()).toEqual({ outbox: ['2', '3'], webhooks: ['waiting'], inbox: ['recent'] });

    const text = await retrysafe(['sweep', '--outbox-older-than', '0'], { DATABASE_URL: db.url });
    expect(text.stdout).toBe(
      'Tombstoned 0 expired responses and deleted 0 expired tombstones in 2 batches.\nPruned 1 delivered outbox messages.\n',
    );
    expect(await remaining()).toEqual({ outbox: ['3'], webhooks: ['waiting'], inbox: ['recent'] });
    await db.database.query(
      'DELETE FROM retrysafe_outbox; DELETE FROM retrysafe_webhook_events; DELETE FROM retrysafe_inbox',
    );
  });

  it('refuses to keep inbox records for less time than webhook events (2), and reports a prune that failed in one line (1)', async () => {
    const shorter = await retrysafe([
      'sweep',
      '--webhooks-older-than',
      '86400',
      '--inbox-older-than',
      '3600',
      '--database-url',
      db.url,
    ]);
    expect(shorter.code).toBe(2);
    expect(expectOneLineError(shorter)).toMatch(/^error: --inbox-older-than must be at least --webhooks-older-than/);

    await messagingRows();
    await db.database.query('ALTER TABLE retrysafe_inbox RENAME TO retrysafe_inbox_away');
    try {
      const failed = await retrysafe([
        'sweep',
        '--outbox-older-than',
        '86400',
        '--inbox-older-than',
        '0',
        '--database-url',
        db.url,
      ]);
      expect(failed.code).toBe(1);
      // One line on stderr, after what the rest of the pass did on stdout.
      expect(failed.stderr).toMatch(
        /^retrysafe sweep: pruning inbox failed: The operation store failed: relation "retrysafe_inbox" does not exist\.\n$/,
      );
      expect(failed.stdout).toBe(
        'Tombstoned 0 expired responses and deleted 0 expired tombstones in 2 batches.\nPruned 1 delivered outbox messages.\n',
      );
    } finally {
      await db.database.query('ALTER TABLE retrysafe_inbox_away RENAME TO retrysafe_inbox');
      await db.database.query(
        'DELETE FROM retrysafe_outbox; DELETE FROM retrysafe_webhook_events; DELETE FROM retrysafe_inbox',
      );
    }
  });

  it('keeps to --max-records-per-second between batches, and refuses a limit that is not a whole number above 0', async () => {
    await db.database.query('DELETE FROM retrysafe_operations');
    for (let i = 0; i < 3; i++)
      await insertRecord(db.database, { key: `limited-${i}`, state: 'completed', responseExpiresIn: -1 });

    const started = performance.now();
    const [run, zero, fraction] = await Promise.all([
      retrysafe(['sweep', '--batch-size', '1', '--max-records-per-second', '2', '--json'], {
        DATABASE_URL: db.url,
      }).then((result) => ({ ...result, ms: performance.now() - started })),
      retrysafe(['sweep', '--max-records-per-second', '0', '--database-url', db.url]),
      retrysafe(['sweep', '--max-records-per-second', '2.5', '--database-url', db.url]),
    ]);

    expect(run.code).toBe(0);
    // Three batches of one and a fourth that found none left, then the delete step's one.
    expect(JSON.parse(run.stdout)).toEqual({ tombstoned: 3, deleted: 0, batches: 5 });
    // Two a second: the fourth batch started no sooner than 1.5 s into the pass (a lower bound only).
    expect(run.ms).toBeGreaterThanOrEqual(1500);
    for (const refused of [zero, fraction]) {
      expect(refused.code).toBe(2);
      expect(expectOneLineError(refused)).toMatch(
        /^error: option '--max-records-per-second <n>' argument '[\d.]+' is invalid\. expected a whole number from 1 to 1000000000\.$/,
      );
    }
  });

  it('fails in one line on a bad --batch-size (2) and on an unreachable database (1)', async () => {
    const [bad, unreachable] = await Promise.all([
      retrysafe(['sweep', '--batch-size', '0', '--database-url', db.url]),
      retrysafe(['sweep', '--database-url', await unreachableDatabaseUrl()]),
    ]);
    expect(bad.code).toBe(2);
    expect(expectOneLineError(bad)).toBe(
      "error: option '--batch-size <n>' argument '0' is invalid. expected a whole number from 1 to 100000.",
    );
    expect(unreachable.code).toBe(1);
    expect(expectOneLineError(unreachable)).toMatch(
      /^retrysafe sweep: The operation store failed: connect ECONNREFUSED/,
    );
  });
});

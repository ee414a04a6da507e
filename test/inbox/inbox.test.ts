import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isRetrysafeError } from '../../src/core/errors.js';
import { consume, type InboxConsumer, pruneInbox } from '../../src/inbox/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type Engine, engines } from '../support/engines.js';
import { EMAILS_TABLE, emailsByMessage } from './programs/emails.js';

describe.each(engines)('the inbox on $name', (factory) => {
  let engine: Engine;

  beforeAll(async () => {
    engine = await factory.open();
    await engine.database.query(EMAILS_TABLE);
  });
  afterAll(() => engine.close());
  beforeEach(async () => {
    await engine.database.query('DELETE FROM retrysafe_inbox');
    await engine.database.query('DELETE FROM emails');
  });

  const email = (consumer: InboxConsumer, id: string, calls: string[] = []) =>
    consume(engine.database, consumer, id, async (tx: SqlClient) => {
      calls.push(id);
      await tx.query('INSERT INTO emails (consumer, message_id, recipient) VALUES ($1, $2, $3)', [
        typeof consumer === 'string' ? consumer : consumer.name,
        id,
        'ada@example.test',
      ]);
      return 'sent';
    });
  const records = async () =>
    (
      await engine.database.query<{ consumer: string; generation: number; message_id: string }>(
        'SELECT consumer, generation, message_id FROM retrysafe_inbox ORDER BY consumer, generation',
      )
    ).rows;

  it('runs the handler and commits its writes with the record; a redelivery runs nothing', async () => {
    const id = randomUUID();
    const calls: string[] = [];
    expect(await email('emails', id, calls)).toEqual({ kind: 'processed', value: 'sent' });
    expect(await email('emails', id, calls)).toEqual({ kind: 'duplicate' });
    expect(calls).toEqual([id]);
    expect(await emailsByMessage(engine.database)).toEqual({ [id]: 1 });
    expect(await records()).toEqual([{ consumer: 'emails', generation: 1, message_id: id }]);
  });

  it("runs the handler in the data layer's own transaction, once per message, and records nothing when it throws", async () => {
    const { native } = engine;
    const [id, failing] = [randomUUID(), randomUUID()];
    const calls: string[] = [];
    const send = async (tx: unknown, messageId: string) => {
      calls.push(messageId);
      await native
        .runner(tx)
        .query('INSERT INTO emails (consumer, message_id, recipient) VALUES ($1, $2, $3)', [
          'emails',
          messageId,
          'ada@example.test',
        ]);
    };
    expect(await consume(native, 'emails', id, (tx) => send(tx, id))).toEqual({ kind: 'processed', value: undefined });
    expect(await consume(native, 'emails', id, (tx) => send(tx, id))).toEqual({ kind: 'duplicate' });
    const failure = new Error('the mail server said no');
    await expect(
      consume(native, 'emails', failing, async (tx) => {
        await send(tx, failing);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(calls).toEqual([id, failing]);
    expect(await emailsByMessage(engine.database)).toEqual({ [id]: 1 });
    expect(await records()).toEqual([{ consumer: 'emails', generation: 1, message_id: id }]);
  });

  it('runs once for each consumer of the same message', async () => {
    const id = randomUUID();
    expect((await email('emails', id)).kind).toBe('processed');
    expect((await email('audit', id)).kind).toBe('processed');
    expect((await email('audit', id)).kind).toBe('duplicate');
    expect(await emailsByMessage(engine.database, 'emails')).toEqual({ [id]: 1 });
    expect(await emailsByMessage(engine.database, 'audit')).toEqual({ [id]: 1 });
  });

  it('records nothing when the handler throws, rethrows its error, and runs it on the next delivery', async () => {
    const id = randomUUID();
    const failure = new Error('the mail server said no');
    await expect(
      consume(engine.database, 'emails', id, async (tx: SqlClient) => {
        await tx.query('INSERT INTO emails (consumer, message_id, recipient) VALUES ($1, $2, $3)', [
          'emails',
          id,
          'ada@example.test',
        ]);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await records()).toEqual([]);
    expect(await emailsByMessage(engine.database)).toEqual({});
    expect((await email('emails', id)).kind).toBe('processed');
    expect(await emailsByMessage(engine.database)).toEqual({ [id]: 1 });
  });

  it('processes a message again in a new generation, for a deliberate rebuild', async () => {
    const id = randomUUID();
    expect((await email('emails', id)).kind).toBe('processed');
    expect((await email({ name: 'emails', generation: 1 }, id)).kind).toBe('duplicate');
    expect((await email({ name: 'emails', generation: 2 }, id)).kind).toBe('processed');
    expect((await email({ name: 'emails', generation: 2 }, id)).kind).toBe('duplicate');
    expect((await records()).map((record) => record.generation)).toEqual([1, 2]);
  });

  it('lets exactly one of many concurrent deliveries of a message run', async () => {
    const id = randomUUID();
    const calls: string[] = [];
    const slowEmail = () =>
      consume(engine.database, 'emails', id, async (tx: SqlClient) => {
        calls.push(id);
        await tx.query('INSERT INTO emails (consumer, message_id, recipient) VALUES ($1, $2, $3)', [
          'emails',
          id,
          'ada@example.test',
        ]);
        await new Promise((resolve) => setTimeout(resolve, 100));
      });
    const results = await Promise.all(Array.from({ length: 8 }, slowEmail));
    expect(results.map((result) => result.kind).sort()).toEqual([
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
      'duplicate',
      'processed',
    ]);
    expect(calls).toHaveLength(1);
    expect(await emailsByMessage(engine.database)).toEqual({ [id]: 1 });
  });

  it('refuses an empty consumer name, a generation below 1 and a message id over 255 bytes', async () => {
    const misuse = (error: unknown) => isRetrysafeError(error, 'misuse');
    await expect(email('', randomUUID())).rejects.toSatisfy(misuse);
    await expect(email({ name: 'emails', generation: 0 }, randomUUID())).rejects.toSatisfy(misuse);
    await expect(email('emails', 'x'.repeat(256))).rejects.toSatisfy(misuse);
    await expect(email('emails', '')).rejects.toSatisfy(misuse);
    expect(await records()).toEqual([]);
  });

  it('prunes records older than the retention, in batches', async () => {
    const ids = Array.from({ length: 5 }, () => randomUUID());
    for (const id of ids) await email('emails', id);
    await engine.database.query(
      "UPDATE retrysafe_inbox SET processed_at = now() - interval '8 days' WHERE message_id = ANY ($1::text[])",
      [ids.slice(1)],
    );
    expect(await pruneInbox(engine.database, { olderThanSeconds: 7 * 24 * 3600, batchSize: 3 })).toBe(4);
    expect((await records()).map((record) => record.message_id)).toEqual([ids[0]]);
  });
});

import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { runOperatorAction } from '../../src/operator/operator-actions.js';
import type { OperationIdentity } from '../../src/core/identity.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { operatorStore } from '../../src/postgres/postgres-operator-store.js';
import { postgresStore } from '../../src/postgres/postgres-store.js';
import { backingOffPayment, insertRecord, unknownPayment as unknownPaymentRecord } from '../retention/records.js';
import { engines } from '../support/engines.js';
import type { Received } from '../support/http.js';
import {
  act,
  actionForm,
  askToConfirm,
  confirmation,
  drawPage,
  followed,
  OPERATOR,
  submit,
  useConsole,
} from './console-http.js';

/**
 * Putting an operation back into recovery, purging a key and requeueing a
 * dead letter of the outbox, through the console over HTTP as an operator
 * does it (the page's form, then its confirmation): each changes the record
 * and records who and why, and a page drawn before the record changed is
 * refused and changes nothing.
 */
const OPERATION = 'payments.create@1';
const REFUSED = 'The record changed since this page was drawn: nothing was done.';

describe.each(engines)('the console’s actions over HTTP on $name', (factory) => {
  const ref = useConsole(factory);
  const db = () => ref.engine.database;

  const operationUrl = (identity: OperationIdentity) =>
    `${ref.base}/operation?${new URLSearchParams({ ...identity }).toString()}`;

  /** A leased payment whose attempt started its charge and gave up: unknown, resumable, with a finished and a started step. */
  async function unknownPayment(): Promise<OperationIdentity> {
    const identity = { tenant: 'tenant-a', operation: OPERATION, key: `pay-${randomUUID()}` };
    await unknownPaymentRecord(db(), identity, 'the provider did not answer the charge');
    return identity;
  }

  /** A leased payment whose process died: its lease ran out a minute ago. */
  async function expiredLease(): Promise<OperationIdentity> {
    const identity = { tenant: 'tenant-a', operation: OPERATION, key: `pay-${randomUUID()}` };
    await insertRecord(db(), {
      ...identity,
      state: 'in_progress',
      mode: 'leased',
      leaseExpiresIn: -60,
      input: { amount: 5 },
    });
    return identity;
  }

  const record = async (identity: OperationIdentity) =>
    (
      await db().query<{ state: string; fencing_token: number; reason: string | null }>(
        'SELECT state, fencing_token, reason FROM retrysafe_operations WHERE tenant = $1 AND operation = $2 AND key = $3',
        [identity.tenant, identity.operation, identity.key],
      )
    ).rows[0];
  const steps = async (identity: OperationIdentity) =>
    (await db().query<{ n: number }>('SELECT count(*)::int AS n FROM retrysafe_steps WHERE key = $1', [identity.key]))
      .rows[0]?.n;
  const recorded = async () =>
    (
      await db().query(
        'SELECT actor, action, tenant, operation, key, message_id, reason, seen FROM retrysafe_operator_actions ORDER BY id',
      )
    ).rows;

  /** What the console records of an action of its operator on an operation. */
  const byOperator = (action: string, identity: OperationIdentity, reason: string, seen: Record<string, unknown>) => ({
    actor: 'ops@example.com',
    action,
    ...identity,
    message_id: null,
    reason,
    seen,
  });

  /** The record moved on meanwhile: a recovery took it over (a new fencing token) and it ended where it was. */
  const takenOver = (identity: OperationIdentity) =>
    db().query(
      'UPDATE retrysafe_operations SET fencing_token = fencing_token + 1, attempt = attempt + 1 WHERE key = $1',
      [identity.key],
    );

  /** Refused as stale: 409, saying so, with a link to the record as it is now. */
  function expectRefused(answer: Received): void {
    expect(answer.status).toBe(409);
    expect(answer.bodyBytes.toString()).toContain(REFUSED);
  }

  describe('the page of an unknown operation', () => {
    it('counts the attempt that gave up among the failures, and shows its error', async () => {
      const identity = { tenant: 'tenant-a', operation: OPERATION, key: `pay-${randomUUID()}` };
      const lease = await backingOffPayment(db(), identity, 0, '');
      const reason = '1 of 1 attempts failed after a step may have taken effect; the last (attempt 1): provider down';
      await postgresStore(db()).markUnknown(lease, reason, { counted: true, error: 'provider down' });
      const page = await drawPage(operationUrl(identity), OPERATOR);
      expect(page).toContain(`<dt>Reason</dt><dd>${reason}</dd>`);
      expect(page).toContain('<dt>Failures</dt><dd>1</dd>');
      expect(page).toContain('<dt>Last error</dt><dd>provider down</dd>');
    });

    it('fills the Resolve form with the status the operation answers success with, else 200', async () => {
      const tenant = `tenant-${randomUUID()}`;
      await insertRecord(db(), { tenant, operation: OPERATION, key: 'paid-before', state: 'completed' });
      const stored = { tenant, operation: OPERATION, key: 'never-answered' };
      const unstored = { tenant, operation: 'refunds.create@1', key: 'never-answered' };
      await unknownPaymentRecord(db(), stored, 'the provider did not answer the charge');
      await unknownPaymentRecord(db(), unstored, 'the provider did not answer the refund');
      expect((await actionForm(operationUrl(stored), 'resolve', OPERATOR)).fields.get('status')).toBe('201');
      expect((await actionForm(operationUrl(unstored), 'resolve', OPERATOR)).fields.get('status')).toBe('200');
    });
  });

  describe('put back into recovery', () => {
    it('puts the unknown operation back in progress, keeps its steps and records who and why', async () => {
      const identity = await unknownPayment();
      const done = await act(operationUrl(identity), 'retry', { reason: 'the provider is up again (OPS-9)' }, OPERATOR);
      const { location, page: after } = await followed(done, ref.base, OPERATOR);
      expect(location).toBe(
        `/ops/operation?${new URLSearchParams({ ...identity, done: 'Put back into recovery: the recovery worker or the next retry resumes it.' }).toString()}`,
      );
      expect(await record(identity)).toEqual({
        state: 'in_progress',
        fencing_token: 1,
        reason: 'the provider is up again (OPS-9)',
      });
      expect(await steps(identity)).toBe(2);
      expect(await recorded()).toEqual([
        byOperator('retry', identity, 'the provider is up again (OPS-9)', { state: 'unknown', fencingToken: 1 }),
      ]);
      // The page it leads back to says so, and lists who did it.
      expect(after).toContain('Put back into recovery: the recovery worker');
      expect(after).toContain('<td>ops@example.com</td><td>retry</td><td>the provider is up again (OPS-9)</td>');
    });

    it('refuses a page drawn before a recovery took the operation over, and changes nothing', async () => {
      const identity = await unknownPayment();
      const confirm = await confirmation(operationUrl(identity), 'retry', { reason: 'stale page' }, OPERATOR);
      await takenOver(identity);
      expectRefused(await submit(confirm, {}, OPERATOR));
      expect(await record(identity)).toEqual({
        state: 'unknown',
        fencing_token: 2,
        reason: 'the provider did not answer the charge',
      });
      expect(await recorded()).toEqual([]);
    });

    it('refuses a page drawn before another operator resolved the operation, and changes nothing', async () => {
      const identity = await unknownPayment();
      const form = await actionForm(operationUrl(identity), 'retry', OPERATOR);
      const confirm = await askToConfirm(form, { reason: 'stale page' }, OPERATOR);
      const config = idempotency({ store: postgresStore(db()) });
      const resolved = await runOperatorAction(
        { config, operators: operatorStore(db()) },
        { action: 'resolve', identity, seen: { state: 'unknown', fencingToken: 1 }, state: 'failed', status: 402 },
        { actor: 'colleague@example.com', reason: 'no charge at the provider' },
      );
      expect(resolved).toEqual({ done: true });
      expectRefused(await submit(confirm, {}, OPERATOR));
      expect(await record(identity)).toMatchObject({ state: 'failed', fencing_token: 1 });
      expect((await recorded()).map((row) => row.actor)).toEqual(['colleague@example.com']);
      // The same form posted once more, already confirmed: refused all the same.
      expectRefused(await submit(form, { reason: 'stale page', confirmed: 'yes' }, OPERATOR));
    });
  });

  describe('purge', () => {
    it('deletes the record and its steps, and records who and why', async () => {
      const identity = await unknownPayment();
      const done = await act(operationUrl(identity), 'purge', { reason: 'test order, never retried' }, OPERATOR);
      const { location, page: after } = await followed(done, ref.base, OPERATOR);
      expect(location).toBe(
        `/ops/operations?${new URLSearchParams({ key: identity.key, done: 'Purged: the key is unknown again, and a late retry runs the operation again.' }).toString()}`,
      );
      expect(await record(identity)).toBeUndefined();
      expect(await steps(identity)).toBe(0);
      expect(await recorded()).toEqual([
        byOperator('purge', identity, 'test order, never retried', { state: 'unknown', fencingToken: 1 }),
      ]);
      expect(after).toContain('Purged: the key is unknown again');
      expect(after).toContain('No operations match.');
    });

    it('purges an operation whose lease ran out', async () => {
      const identity = await expiredLease();
      expect((await act(operationUrl(identity), 'purge', { reason: 'abandoned import' }, OPERATOR)).status).toBe(303);
      expect(await record(identity)).toBeUndefined();
      expect(await recorded()).toMatchObject([{ action: 'purge', seen: { state: 'in_progress', fencingToken: 1 } }]);
    });

    it('refuses a page drawn before a recovery took the expired lease over, and deletes nothing', async () => {
      const identity = await expiredLease();
      const confirm = await confirmation(operationUrl(identity), 'purge', { reason: 'stale page' }, OPERATOR);
      await takenOver(identity);
      expectRefused(await submit(confirm, {}, OPERATOR));
      expect(await record(identity)).toEqual({ state: 'in_progress', fencing_token: 2, reason: null });
      expect(await recorded()).toEqual([]);
    });

    it('refuses a page drawn before the operation’s state changed, and deletes nothing', async () => {
      const identity = await expiredLease();
      const confirm = await confirmation(operationUrl(identity), 'purge', { reason: 'stale page' }, OPERATOR);
      // The recovery worker found it could not tell what happened.
      await db().query(
        `UPDATE retrysafe_operations SET state = 'unknown', reason = 'gave up', owner_token = NULL, lease_expires_at = NULL WHERE key = $1`,
        [identity.key],
      );
      expectRefused(await submit(confirm, {}, OPERATOR));
      expect(await record(identity)).toEqual({ state: 'unknown', fencing_token: 1, reason: 'gave up' });
      expect(await recorded()).toEqual([]);
    });
  });

  describe('requeueing an outbox dead letter', () => {
    const deadLetter = async (id: string) =>
      db().query(
        `INSERT INTO retrysafe_outbox (id, topic, payload, state, attempts, last_error, parked_at)
         VALUES ($1, 'orders.created', '{}', 'dead', 8, 'broker refused: 503', now() - interval '1 minute')`,
        [id],
      );
    const message = async (id: string) =>
      (
        await db().query<{ state: string; attempts: number; parked: boolean }>(
          'SELECT state, attempts, parked_at IS NOT NULL AS parked FROM retrysafe_outbox WHERE id = $1',
          [id],
        )
      ).rows[0];
    const parkedAt = async (id: string) =>
      (
        await db().query<{ at: string }>(
          `SELECT to_char(parked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at FROM retrysafe_outbox WHERE id = $1`,
          [id],
        )
      ).rows[0]?.at;

    it('sends it again with a fresh count of attempts, leaves the others, and records who and why', async () => {
      const [id, other] = [randomUUID(), randomUUID()];
      await deadLetter(id);
      await deadLetter(other);
      const seen = await parkedAt(id);
      const done = await act(
        `${ref.base}/dead-letters`,
        'requeue',
        { reason: 'the broker is back (OPS-12)' },
        OPERATOR,
        { id },
      );
      const { location, page: after } = await followed(done, ref.base, OPERATOR);
      expect(location).toBe(
        `/ops/dead-letters?${new URLSearchParams({ done: 'Requeued: the relay sends the message again.' }).toString()}`,
      );
      expect(await message(id)).toEqual({ state: 'pending', attempts: 0, parked: false });
      expect(await message(other)).toEqual({ state: 'dead', attempts: 8, parked: true });
      expect(await recorded()).toEqual([
        {
          actor: 'ops@example.com',
          action: 'requeue',
          tenant: null,
          operation: null,
          key: null,
          message_id: id,
          reason: 'the broker is back (OPS-12)',
          seen: { parkedAt: seen },
        },
      ]);
      expect(after).toContain('Requeued: the relay sends the message again.');
      expect(after).not.toContain(id);
      expect(after).toContain(other);
    });

    it('refuses a page drawn before the message was requeued and parked again, and changes nothing', async () => {
      const id = randomUUID();
      await deadLetter(id);
      const confirm = await confirmation(`${ref.base}/dead-letters`, 'requeue', { reason: 'stale page' }, OPERATOR, {
        id,
      });
      // Another operator requeued it, and the relay gave up on it again.
      await db().query(
        `UPDATE retrysafe_outbox SET parked_at = now(), attempts = 3, last_error = 'broker refused again' WHERE id = $1`,
        [id],
      );
      const parkedAgain = await parkedAt(id);
      expectRefused(await submit(confirm, {}, OPERATOR));
      expect(await message(id)).toEqual({ state: 'dead', attempts: 3, parked: true });
      expect(await parkedAt(id)).toBe(parkedAgain);
      expect(await recorded()).toEqual([]);
    });

    it('refuses a version the console did not write (a time PostgreSQL would read some other way, or none), and changes nothing', async () => {
      const id = randomUUID();
      await deadLetter(id);
      const confirm = await confirmation(`${ref.base}/dead-letters`, 'requeue', { reason: 'edited form' }, OPERATOR, {
        id,
      });
      for (const seen of ['yesterday', 'not a time', (await parkedAt(id))?.replace('Z', '') ?? ''])
        expectRefused(await submit(confirm, { seen }, OPERATOR));
      expect(await message(id)).toEqual({ state: 'dead', attempts: 8, parked: true });
      expect(await recorded()).toEqual([]);
    });
  });
});

import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprint } from '../../src/core/fingerprint.js';
import type { OperationIdentity } from '../../src/core/identity.js';
import { downstreamKey } from '../../src/modes/downstream-key.js';
import { postgresStore } from '../../src/postgres/index.js';
import { type Lease } from '../../src/store/lease-store.js';
import { defaultRetention } from '../../src/core/retention.js';
import { unreachableDatabaseUrl } from '../observe/unreachable-database.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

describe('retrysafe inspect', () => {
  let db: CliDatabase;
  const finished: OperationIdentity = {
    tenant: 'tenant-a',
    operation: 'payments.create@1',
    key: `done-${randomUUID()}`,
  };
  const running: OperationIdentity = {
    tenant: 'tenant-a',
    operation: 'payments.create@1',
    key: `running-${randomUUID()}`,
  };
  const started: OperationIdentity = {
    tenant: 'tenant-a',
    operation: 'payments.create@1',
    key: `started-${randomUUID()}`,
  };
  const backingOff: OperationIdentity = {
    tenant: 'tenant-a',
    operation: 'payments.create@1',
    key: `backing-off-${randomUUID()}`,
  };
  const print = fingerprint({ amount: 1299 });
  let runningLease: Lease;

  beforeAll(async () => {
    db = await openCliDatabase();
    const store = postgresStore(db.database);
    const claim = async (identity: OperationIdentity): Promise<Lease> => {
      const claimed = await store.claimLease({
        identity,
        fingerprint: print,
        input: { amount: 1299 },
        mode: 'leased',
        ownerToken: randomUUID(),
        leaseSeconds: 300,
      });
      if (claimed.kind !== 'claimed') throw new Error('not claimed');
      return claimed.lease;
    };
    const lease = await claim(finished);
    await store.checkpoint(lease, 'charge', { id: 'ch_1' });
    await store.checkpoint(lease, 'record-payment', { order: 'o-1' });
    await store.completeLease(lease, {
      state: 'completed',
      reply: {
        status: 201,
        headers: { 'content-type': 'application/json', location: '/payments/ch_1' },
        body: Buffer.from('{"card":"4242-secret"}'),
      },
      retention: defaultRetention,
    });
    runningLease = await claim(running);
    const startedLease = await claim(started);
    await store.checkpoint(startedLease, 'charge', { id: 'ch_2' });
    await store.startStep(startedLease, 'record-payment');
    const failingLease = await claim(backingOff);
    await store.startStep(failingLease, 'charge');
    await store.release(failingLease, { delaySeconds: 600, counted: true, error: 'provider unavailable (503)' });
  });
  afterAll(() => db.close());

  const args = (identity: OperationIdentity) => [
    'inspect',
    identity.tenant,
    identity.operation,
    identity.key,
    '--database-url',
    db.url,
  ];

  it('shows a finished operation with its fingerprint prefix, status and steps, and no body unless asked', async () => {
    const run = await retrysafe(args(finished));
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('state: completed\n');
    expect(run.stdout).toContain('mode: leased\n');
    expect(run.stdout).toContain(`fingerprint: ${Buffer.from(print).toString('hex').slice(0, 12)}\n`);
    expect(run.stdout).toContain('status: 201\n');
    expect(run.stdout).toContain('resource: /payments/ch_1\n');
    expect(run.stdout).toContain('steps: charge, record-payment\n');
    expect(run.stdout).not.toContain('4242-secret');

    const withBody = await retrysafe([...args(finished), '--json', '--show-body']);
    expect(withBody.code).toBe(0);
    const view = JSON.parse(withBody.stdout) as Record<string, unknown>;
    expect(view).toMatchObject({
      ...finished,
      state: 'completed',
      attempt: 1,
      fingerprint: Buffer.from(print).toString('hex').slice(0, 12),
      status: 201,
      bodyBytes: 22,
      body: { encoding: 'utf8', text: '{"card":"4242-secret"}' },
      steps: [{ name: 'charge' }, { name: 'record-payment' }],
    });
    expect(typeof view.responseExpiresAt).toBe('string');
  });

  it('shows the lease of a running operation: owner, expiry and attempt', async () => {
    const run = await retrysafe([...args(running), '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({
      state: 'in_progress',
      attempt: 1,
      fencingToken: 1,
      leaseOwner: runningLease.ownerToken,
      steps: [],
    });
  });

  it('shows a step that was started and never finished, as `retrysafe stuck` lists its operation', async () => {
    const [text, json] = await Promise.all([retrysafe(args(started)), retrysafe([...args(started), '--json'])]);
    expect(text.stderr).toBe('');
    expect(text.code).toBe(0);
    expect(text.stdout).toContain('steps: charge, record-payment (started, unfinished)\n');
    const view = JSON.parse(json.stdout) as { steps: { name: string; startedAt: string; finishedAt?: string }[] };
    expect(view.steps.map((step) => [step.name, typeof step.startedAt, typeof step.finishedAt])).toEqual([
      ['charge', 'string', 'string'],
      ['record-payment', 'string', 'undefined'],
    ]);
  });

  it('shows the downstream key of each step, and the failures, next attempt and last error of an operation backing off', async () => {
    const [text, json] = await Promise.all([retrysafe(args(backingOff)), retrysafe([...args(backingOff), '--json'])]);
    expect(text.stderr).toBe('');
    const chargeKey = downstreamKey(backingOff, 'charge');
    expect(text.stdout).toContain(`steps: charge (started, unfinished)\n  charge: downstream key ${chargeKey}\n`);
    expect(text.stdout).toContain('failures: 1\n');
    expect(text.stdout).toContain('lastError: provider unavailable (503)\n');
    const view = JSON.parse(json.stdout) as { nextAttemptAt: string; createdAt: string };
    expect(view).toMatchObject({
      failures: 1,
      lastError: 'provider unavailable (503)',
      steps: [{ name: 'charge', downstreamKey: chargeKey }],
    });
    expect(Date.parse(view.nextAttemptAt) - Date.parse(view.createdAt)).toBeGreaterThan(500_000);
    expect(text.stdout).toContain(`nextAttemptAt: ${view.nextAttemptAt}\n`);
  });

  it('accepts the key in both forms the Idempotency-Key header takes: a quoted structured-field string and a bare token', async () => {
    const [bare, quoted] = await Promise.all([
      retrysafe([...args(finished), '--json']),
      retrysafe([...args({ ...finished, key: `"${finished.key}"` }), '--json']),
    ]);
    expect(quoted.code).toBe(0);
    expect(JSON.parse(quoted.stdout)).toEqual(JSON.parse(bare.stdout));
  });

  it.each([
    ['an unterminated quoted string', '"abc', 'The Idempotency-Key header is not a valid structured-field string.'],
    ['two keys', 'a,b', 'The Idempotency-Key header holds more than one value.'],
    ['a non-ASCII key', 'clé', 'The Idempotency-Key may only contain visible ASCII characters (0x21 to 0x7E).'],
  ])('refuses %s as a usage error, as HTTP refuses it with 400', async (_name, key, detail) => {
    const run = await retrysafe(['inspect', 'tenant-a', 'payments.create@1', key, '--database-url', db.url]);
    expect(run.code).toBe(2);
    expect(expectOneLineError(run)).toBe(
      `error: command-argument value '${key}' is invalid for argument 'key'. ${detail}`,
    );
  });

  it('fails in one line when the operation does not exist (1), an argument is missing (2) or the database is unreachable (1)', async () => {
    const [absent, missing, unreachable] = await Promise.all([
      retrysafe(args({ ...finished, key: 'never-used' })),
      retrysafe(['inspect', 'tenant-a', 'payments.create@1', '--database-url', db.url]),
      retrysafe(['inspect', 'tenant-a', 'payments.create@1', 'k', '--database-url', await unreachableDatabaseUrl()]),
    ]);
    expect(absent.code).toBe(1);
    expect(expectOneLineError(absent)).toBe(
      'retrysafe inspect: no operation tenant-a / payments.create@1 / never-used.',
    );
    expect(missing.code).toBe(2);
    expect(expectOneLineError(missing)).toBe("error: missing required argument 'key'");
    expect(unreachable.code).toBe(1);
    expect(expectOneLineError(unreachable)).toMatch(
      /^retrysafe inspect: The operation store failed: connect ECONNREFUSED/,
    );
  });
});

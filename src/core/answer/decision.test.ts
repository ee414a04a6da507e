import { describe, expect, it } from 'vitest';
import { fingerprint } from '../fingerprint.js';
import { decideExisting, inProgress } from './decision.js';
import { principalDigest } from '../principal.js';
import type { OperationRecord } from '../record.js';
import { toReply } from './reply.js';

const identity = { tenant: 't1', operation: 'orders.create@1', key: 'k1' };
const mine = fingerprint({ method: 'POST', path: '/orders', body: { sku: 'A' } });
const other = fingerprint({ method: 'POST', path: '/orders', body: { sku: 'B' } });
const readAt = new Date('2025-01-01T00:00:00.000Z');
const base = {
  identity,
  mode: 'atomic' as const,
  fingerprint: mine,
  createdAt: new Date(readAt.getTime() - 10_000),
  readAt,
};
const response = toReply({ status: 201, headers: { location: '/orders/1' }, body: { id: 1 } });

function inProgressFor(leaseMs: number, fp = mine): OperationRecord {
  return {
    ...base,
    fingerprint: fp,
    state: 'in_progress',
    leaseExpiresAt: new Date(readAt.getTime() + leaseMs),
    attempt: 1,
    fencingToken: 1,
  };
}

const allStates: OperationRecord[] = [
  inProgressFor(5000),
  { ...base, state: 'completed', response, responseOmitted: false, completedAt: readAt, responseExpiresAt: readAt },
  {
    ...base,
    state: 'failed',
    response: toReply({ status: 422, body: { error: 'out of stock' } }),
    responseOmitted: false,
    completedAt: readAt,
    responseExpiresAt: readAt,
  },
  { ...base, state: 'unknown', reason: 'handler timed out' },
  { ...base, state: 'tombstone', status: 201, resource: '/orders/1' },
];

const alice = principalDigest(identity, 'alice');
const bob = principalDigest(identity, 'bob');

describe('decideExisting', () => {
  it.each(allStates.map((r) => [r.state, r] as const))(
    "refuses another principal's %s record before anything else, and without its answer",
    (_state, record) => {
      // Another fingerprint too: the refusal must not tell the other principal that its input differs.
      for (const fp of [mine, other]) {
        for (const requested of [bob, undefined]) {
          const decision = decideExisting({ ...record, fingerprint: fp, principal: alice }, mine, requested);
          expect(decision).toEqual({
            kind: 'problem',
            problem: { code: 'key-of-another-principal', detail: expect.any(String) as string },
          });
        }
      }
    },
  );

  it('answers the same principal as it would answer anyone, and a record without a principal as before', () => {
    const completed = allStates[1];
    if (completed === undefined) throw new Error('no completed record');
    expect(decideExisting({ ...completed, principal: alice }, mine, principalDigest(identity, 'alice'))).toEqual({
      kind: 'replay',
      reply: response,
    });
    expect(decideExisting(completed, mine, bob)).toEqual({ kind: 'replay', reply: response });
    expect(decideExisting(completed, mine)).toEqual({ kind: 'replay', reply: response });
  });

  it.each(allStates.map((r) => [r.state, r] as const))(
    'refuses a %s record with another fingerprint as fingerprint-mismatch',
    (_state, record) => {
      const decision = decideExisting({ ...record, fingerprint: other }, mine);
      expect(decision).toMatchObject({ kind: 'problem', problem: { code: 'fingerprint-mismatch' } });
    },
  );

  it('compares the fingerprint before the state: a mismatching in_progress record is not operation-in-progress', () => {
    const decision = decideExisting(inProgressFor(5000, other), mine);
    expect(decision.kind).toBe('problem');
    if (decision.kind === 'problem') {
      expect(decision.problem.code).toBe('fingerprint-mismatch');
      expect(decision.problem.retryAfter).toBeUndefined();
    }
  });

  it('replays a completed record as stored', () => {
    const decision = decideExisting(
      { ...base, state: 'completed', response, responseOmitted: false, completedAt: readAt, responseExpiresAt: readAt },
      mine,
    );
    expect(decision).toEqual({ kind: 'replay', reply: response });
    if (decision.kind === 'replay') expect(decision.reply).toBe(response);
  });

  it('replays a failed record as stored', () => {
    const failed = toReply({ status: 422, body: { error: 'out of stock' } });
    expect(
      decideExisting(
        {
          ...base,
          state: 'failed',
          response: failed,
          responseOmitted: false,
          completedAt: readAt,
          responseExpiresAt: readAt,
        },
        mine,
      ),
    ).toEqual({ kind: 'replay', reply: failed });
  });

  it('answers a completed record whose body was too large to keep with response-not-stored, pointing at its Location', () => {
    const decision = decideExisting(
      {
        ...base,
        state: 'completed',
        response: { ...response, body: new Uint8Array() },
        responseOmitted: true,
        completedAt: readAt,
        responseExpiresAt: readAt,
      },
      mine,
    );
    expect(decision).toMatchObject({
      kind: 'problem',
      problem: { code: 'response-not-stored', resource: '/orders/1' },
    });
  });

  it('answers an in_progress record with operation-in-progress and the seconds left on the lease', () => {
    const decision = decideExisting(inProgressFor(5000), mine);
    expect(decision).toEqual({ kind: 'problem', problem: inProgress(5) });
    expect(decision).toMatchObject({ problem: { code: 'operation-in-progress', retryAfter: 5 } });
  });

  it.each([
    [30_000, 30],
    [1000, 1],
    [1001, 2],
    [1500, 2],
    [999, 1],
    [1, 1],
    [0, 1],
    [-5000, 1],
  ])('rounds a lease of %i ms left up to %i s, and never below 1', (leaseMs, seconds) => {
    expect(decideExisting(inProgressFor(leaseMs), mine)).toMatchObject({
      problem: { code: 'operation-in-progress', retryAfter: seconds },
    });
  });

  it("uses the record's read time, not the local clock", () => {
    const record: OperationRecord = {
      ...base,
      readAt: new Date('2000-01-01T00:00:00Z'),
      state: 'in_progress',
      leaseExpiresAt: new Date('2000-01-01T00:00:07Z'),
      attempt: 2,
      fencingToken: 2,
    };
    expect(decideExisting(record, mine)).toMatchObject({ problem: { retryAfter: 7 } });
  });

  it('answers an unknown record with outcome-unknown, without Retry-After', () => {
    const decision = decideExisting({ ...base, state: 'unknown', reason: 'lease expired' }, mine);
    expect(decision).toMatchObject({ kind: 'problem', problem: { code: 'outcome-unknown' } });
    if (decision.kind === 'problem') expect(decision.problem.retryAfter).toBeUndefined();
  });

  it('answers a tombstone with response-expired and the resource', () => {
    const decision = decideExisting({ ...base, state: 'tombstone', status: 201, resource: '/orders/1' }, mine);
    expect(decision).toMatchObject({ kind: 'problem', problem: { code: 'response-expired', resource: '/orders/1' } });
  });

  it('answers a tombstone without a resource with response-expired and no resource member', () => {
    const decision = decideExisting({ ...base, state: 'tombstone', status: 204, resource: undefined }, mine);
    expect(decision).toMatchObject({ kind: 'problem', problem: { code: 'response-expired' } });
    if (decision.kind === 'problem') expect(decision.problem).not.toHaveProperty('resource');
  });
});

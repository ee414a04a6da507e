import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationIdentity } from '../../src/core/identity.js';
import { runOperatorAction } from '../../src/operator/operator-actions.js';
import type { OperatorTools } from '../../src/operator/operator-tools.js';

/** What a test writes before it looks: the seam itself creates no record. */
export interface OperatorSeed {
  /** A leased operation whose outcome is unknown, with a started step; its input kept unless `resumable` is false. */
  unknown(identity: OperationIdentity, options?: { readonly resumable?: boolean }): Promise<void>;
  /** A completed operation that answered `status`. */
  completed(identity: OperationIdentity, status: number): Promise<void>;
  /** A dead letter of the outbox: its id. */
  deadLetter(topic: string): Promise<string>;
}

/** One implementation of the operator seam, seeded as the implementation can. */
export interface OperatorFixture {
  readonly tools: OperatorTools<unknown>;
  readonly seed: OperatorSeed;
  close(): Promise<void>;
}

const by = { actor: 'ops@example.com', reason: 'checked at the provider' };

/**
 * What every implementation of the operator seam does, through its
 * interface alone: the reads the console and the CLI show, and the actions
 * (resolve, retry, purge, requeue), each done only on the version the
 * operator saw and recorded with who and why.
 */
export function describeOperatorContract(name: string, open: () => Promise<OperatorFixture>): void {
  describe(`the operator seam on ${name}`, () => {
    let fixture: OperatorFixture | undefined;
    beforeAll(async () => {
      fixture = await open();
    });
    afterAll(async () => {
      await fixture?.close();
    });
    const f = () => {
      if (fixture === undefined) throw new Error('The fixture is not open yet.');
      return fixture;
    };
    const tenant = `tenant-${randomUUID()}`;
    const identity = (): OperationIdentity => ({ tenant, operation: 'payments.create@1', key: `pay-${randomUUID()}` });

    it('reads an unknown operation with its version, steps and their downstream keys; nothing for an absent one', async () => {
      const id = identity();
      await f().seed.unknown(id);
      const view = await f().tools.operators.operation(id);
      expect(view).toMatchObject({ identity: id, state: 'unknown', mode: 'leased', resumable: true });
      expect(view?.version.state).toBe('unknown');
      expect(view?.steps.map((step) => step.name)).toContain('charge');
      expect(view?.steps[0]?.downstreamKey).toMatch(/\S/);
      expect(await f().tools.operators.operation({ ...id, key: 'never-used' })).toBeUndefined();
    });

    it('lists by state and key prefix, and counts and lists what needs attention', async () => {
      const id = identity();
      await f().seed.unknown(id);
      const listed = await f().tools.operators.list({ tenant, state: 'unknown', limit: 100 });
      expect(listed.items.map((item) => item.identity.key)).toContain(id.key);
      const byPrefix = await f().tools.operators.list({
        key: { match: 'prefix', prefix: id.key.slice(0, 20) },
        limit: 10,
      });
      expect(byPrefix.items.map((item) => item.identity)).toEqual([id]);
      expect((await f().tools.health.stats()).unknownOperations).toBeGreaterThanOrEqual(1);
      const stuck = await f().tools.health.stuck({ olderThanSeconds: 0, limit: 1000 });
      expect(stuck.find((s) => s.identity.key === id.key)?.kind).toBe('unknown');
    });

    it('resolves an unknown operation once, on the version seen, and records who and why', async () => {
      const id = identity();
      await f().seed.unknown(id);
      const seen = (await f().tools.operators.operation(id))!.version;
      const resolve = { action: 'resolve', identity: id, seen, state: 'completed', status: 201 } as const;
      expect(await runOperatorAction(f().tools, resolve, by)).toEqual({ done: true });
      const view = await f().tools.operators.operation(id);
      expect([view?.state, view?.status]).toEqual(['completed', 201]);
      expect(view?.actions.map((action) => [action.action, action.actor, action.reason])).toEqual([
        ['resolve', by.actor, by.reason],
      ]);
      expect(await runOperatorAction(f().tools, resolve, by)).toEqual({ done: false, why: 'changed' });
      expect(await f().tools.operators.successStatus(id)).toBe(201);
    });

    it('puts a resumable unknown operation back into recovery, and refuses one nothing can run again', async () => {
      const id = identity();
      await f().seed.unknown(id);
      const seen = (await f().tools.operators.operation(id))!.version;
      expect(await runOperatorAction(f().tools, { action: 'retry', identity: id, seen }, by)).toEqual({ done: true });
      expect((await f().tools.operators.operation(id))?.state).toBe('in_progress');

      const stuck = identity();
      await f().seed.unknown(stuck, { resumable: false });
      const version = (await f().tools.operators.operation(stuck))!.version;
      expect(await runOperatorAction(f().tools, { action: 'retry', identity: stuck, seen: version }, by)).toEqual({
        done: false,
        why: 'not-resumable',
      });
      expect((await f().tools.operators.operation(stuck))?.state).toBe('unknown');
    });

    it('purges only the version seen', async () => {
      const id = identity();
      await f().seed.completed(id, 201);
      const seen = (await f().tools.operators.operation(id))!.version;
      const stale = { state: seen.state, fencingToken: seen.fencingToken + 1 };
      expect(await runOperatorAction(f().tools, { action: 'purge', identity: id, seen: stale }, by)).toEqual({
        done: false,
        why: 'changed',
      });
      expect(await f().tools.operators.operation(id)).toBeDefined();
      expect(await runOperatorAction(f().tools, { action: 'purge', identity: id, seen }, by)).toEqual({ done: true });
      expect(await f().tools.operators.operation(id)).toBeUndefined();
    });

    it('requeues a dead letter only at the version listed', async () => {
      const id = await f().seed.deadLetter('orders.created');
      const listed = (await f().tools.operators.deadLetters({ limit: 1000 })).items.find((letter) => letter.id === id);
      expect(listed).toBeDefined();
      const dead = (await f().tools.health.outboxBacklog()).dead;
      const requeue = { action: 'requeue', messageId: id } as const;
      expect(await runOperatorAction(f().tools, { ...requeue, seen: '2000-01-01T00:00:00.000000Z' }, by)).toEqual({
        done: false,
        why: 'changed',
      });
      expect(await runOperatorAction(f().tools, { ...requeue, seen: listed!.version }, by)).toEqual({ done: true });
      const after = (await f().tools.operators.deadLetters({ limit: 1000 })).items.map((letter) => letter.id);
      expect(after).not.toContain(id);
      expect((await f().tools.health.outboxBacklog()).dead).toBe(dead - 1);
    });
  });
}

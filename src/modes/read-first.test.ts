import { describe, expect, it } from 'vitest';
import { idempotency } from './idempotency.js';
import { readFirstPolicy } from './read-first.js';
import type { OperationStore } from '../store/operation-store.js';

const observeMany = (
  policy: ReturnType<typeof readFirstPolicy>,
  operation: string,
  replay: boolean,
  times: number,
): void => {
  for (let i = 0; i < times; i += 1) policy(operation).observe(replay);
};

describe('reading before the claim', () => {
  it('starts by claiming first, since most keyed requests are new', () => {
    expect(readFirstPolicy('auto')('orders.create@1').now).toBe(false);
  });

  it('reads first once replays become about a quarter of an operation’s keyed requests, and stops when they fade', () => {
    const policy = readFirstPolicy('auto');
    // One replay in five new keys stays below the break-even share.
    for (let round = 0; round < 40; round += 1) {
      observeMany(policy, 'orders.create@1', false, 4);
      observeMany(policy, 'orders.create@1', true, 1);
    }
    expect(policy('orders.create@1').now).toBe(false);
    observeMany(policy, 'orders.create@1', true, 20);
    expect(policy('orders.create@1').now).toBe(true);
    observeMany(policy, 'orders.create@1', false, 40);
    expect(policy('orders.create@1').now).toBe(false);
  });

  it('reads first at three replays in ten, where a replay saves three round trips and a new key pays one', () => {
    const policy = readFirstPolicy('auto');
    const seen: boolean[] = [];
    for (let round = 0; round < 40; round += 1)
      for (const replay of [true, false, false, true, false, false, true, false, false, false]) {
        policy('orders.create@1').observe(replay);
        if (round >= 30) seen.push(policy('orders.create@1').now);
      }
    expect(seen.every((now) => now)).toBe(true);
  });

  it('follows each operation on its own', () => {
    const policy = readFirstPolicy('auto');
    observeMany(policy, 'payments.create@1', true, 30);
    expect(policy('payments.create@1').now).toBe(true);
    expect(policy('orders.create@1').now).toBe(false);
  });

  it('keeps a fixed choice whatever it observes', () => {
    const always = readFirstPolicy('always');
    const never = readFirstPolicy('never');
    observeMany(always, 'orders.create@1', false, 100);
    observeMany(never, 'orders.create@1', true, 100);
    expect(always('orders.create@1').now).toBe(true);
    expect(never('orders.create@1').now).toBe(false);
  });

  it('refuses an unknown choice when the configuration is built', () => {
    const store = {} as OperationStore<unknown>;
    expect(() => idempotency({ store, readBeforeClaim: 'sometimes' as 'auto' })).toThrow(
      /readBeforeClaim must be one of auto, always, never/,
    );
  });
});

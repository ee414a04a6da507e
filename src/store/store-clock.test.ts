import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isRetrysafeError, type RetrysafeError } from '../core/errors.js';
import { StoreClock } from './store-clock.js';

/** Records how a promise settles; read it after `advanceTimersByTimeAsync`, which runs pending callbacks. */
function watch<T>(promise: Promise<T>): { settled: boolean; value?: T; error?: unknown } {
  const seen: { settled: boolean; value?: T; error?: unknown } = { settled: false };
  promise.then(
    (value) => Object.assign(seen, { settled: true, value }),
    (error: unknown) => Object.assign(seen, { settled: true, error }),
  );
  return seen;
}

function storeUnavailable(error: unknown): RetrysafeError {
  expect(isRetrysafeError(error, 'store-unavailable'), String(error)).toBe(true);
  return error as RetrysafeError;
}

/** A promise settled from outside, as a store call or a handler. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe('StoreClock', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('does not expire before the budget of a store phase is spent', async () => {
    const clock = new StoreClock();
    const expired = watch(clock.expired);
    clock.enterStore(1000);
    await vi.advanceTimersByTimeAsync(999);
    expect(expired.settled).toBe(false);
    expect(() => clock.leaveStore()).not.toThrow();
  });

  it('rejects expired with store-unavailable when a store phase overruns', async () => {
    const clock = new StoreClock();
    const expired = watch(clock.expired);
    clock.enterStore(1000);
    await vi.advanceTimersByTimeAsync(1000);
    expect(expired.settled).toBe(true);
    expect(storeUnavailable(expired.error).message).toContain('1000 ms');
  });

  it('rejects race with store-unavailable when the store does not answer in time', async () => {
    const clock = new StoreClock();
    const store = deferred<string>();
    clock.enterStore(500);
    const raced = watch(clock.race(store.promise));
    await vi.advanceTimersByTimeAsync(499);
    expect(raced.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(raced.settled).toBe(true);
    storeUnavailable(raced.error);
    // A late failure from the store changes nothing and is not an unhandled rejection.
    store.reject(new Error('late failure'));
    await vi.advanceTimersByTimeAsync(0);
  });

  it('makes leaveStore throw once a store phase has overrun, so late work never runs', async () => {
    const clock = new StoreClock();
    clock.enterStore(100);
    await vi.advanceTimersByTimeAsync(100);
    let thrown: unknown;
    try {
      clock.leaveStore();
    } catch (error) {
      thrown = error;
    }
    storeUnavailable(thrown);
  });

  it('settles race with the work when the store answers in time, and leaves no timer', async () => {
    const clock = new StoreClock();
    clock.enterStore(1000);
    await expect(clock.race(Promise.resolve('done'))).resolves.toBe('done');
    expect(vi.getTimerCount()).toBe(0);
  });

  it("passes the work's own error through race, and leaves no timer", async () => {
    const clock = new StoreClock();
    clock.enterStore(1000);
    const failure = new Error('constraint violated');
    await expect(clock.race(Promise.reject(failure))).rejects.toBe(failure);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('runs no timer during a non-store phase, however long it takes', async () => {
    const clock = new StoreClock();
    const expired = watch(clock.expired);
    const handler = deferred<string>();
    clock.enterStore(1000);
    const raced = watch(
      clock.race(
        (async () => {
          clock.leaveStore();
          // The handler runs here: not store time.
          return await handler.promise;
        })(),
      ),
    );
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(expired.settled).toBe(false);
    expect(raced.settled).toBe(false);
    handler.resolve('ok');
    await vi.advanceTimersByTimeAsync(0);
    expect(raced).toEqual({ settled: true, value: 'ok' });
  });

  it('gives each store phase its own budget', async () => {
    const clock = new StoreClock();
    const expired = watch(clock.expired);
    // Claim: 800 of 1000 ms.
    clock.enterStore(1000);
    await vi.advanceTimersByTimeAsync(800);
    clock.leaveStore();
    // Handler: 10 s, not counted.
    await vi.advanceTimersByTimeAsync(10_000);
    // Complete: a fresh 1000 ms, not the 200 left over.
    clock.enterStore(1000);
    await vi.advanceTimersByTimeAsync(999);
    expect(expired.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    storeUnavailable(expired.error);
  });

  it('replaces the timer of an earlier phase on enterStore', async () => {
    const clock = new StoreClock();
    const expired = watch(clock.expired);
    clock.enterStore(100);
    clock.enterStore(5000);
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(4999);
    expect(expired.settled).toBe(false);
  });

  it('leaves no timer behind after race settles, even inside a store phase', async () => {
    const clock = new StoreClock();
    const expired = watch(clock.expired);
    clock.enterStore(1000);
    const work = Promise.resolve().then(() => {
      clock.leaveStore();
      clock.enterStore(1000);
      return 'committed';
    });
    await expect(clock.race(work)).resolves.toBe('committed');
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(5000);
    expect(expired.settled).toBe(false);
  });

  it('never rejects expired when no store phase was entered', async () => {
    const clock = new StoreClock();
    const expired = watch(clock.expired);
    expect(vi.getTimerCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(expired.settled).toBe(false);
    expect(() => clock.leaveStore()).not.toThrow();
  });
});

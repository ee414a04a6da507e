import { describe, expect, it } from 'vitest';
import { manualClock } from './manual-clock.js';

describe('manualClock', () => {
  it('stands still until advanced, then moves both clocks by the same amount', async () => {
    const clock = manualClock(1_000_000);
    expect([clock.now(), clock.monotonic()]).toEqual([1_000_000, 0]);
    await clock.advance(250);
    expect([clock.now(), clock.monotonic()]).toEqual([1_000_250, 250]);
  });

  it('fires due timers earliest first, at their own time, and leaves later ones', async () => {
    const clock = manualClock();
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.monotonic()}`), 200);
    clock.setTimeout(() => fired.push(`a@${clock.monotonic()}`), 100);
    clock.setTimeout(() => fired.push(`c@${clock.monotonic()}`), 200);
    clock.setTimeout(() => fired.push('late'), 301);
    await clock.advance(300);
    expect(fired).toEqual(['a@100', 'b@200', 'c@200']);
    expect(clock.pending()).toBe(1);
  });

  it('never fires a cleared timer', async () => {
    const clock = manualClock();
    let fired = false;
    clock.clearTimeout(clock.setTimeout(() => (fired = true), 10));
    await clock.advance(20);
    expect(fired).toBe(false);
    expect(clock.pending()).toBe(0);
  });

  it('lets promise work run between timers, so a timer set after an await fires within the same advance', async () => {
    const clock = manualClock();
    const fired: number[] = [];
    const wait = (ms: number): Promise<void> => new Promise((resolve) => clock.setTimeout(resolve, ms));
    void (async () => {
      await wait(100);
      fired.push(clock.monotonic());
      await Promise.resolve();
      await wait(100);
      fired.push(clock.monotonic());
    })();
    await clock.advance(250);
    expect(fired).toEqual([100, 200]);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { idempotency, isRetrysafeError } from '../../src/index.js';
import { postgresStore } from '../../src/postgres/index.js';
import { type Engine, engines } from '../support/engines.js';

/** The longest delay Node's setTimeout keeps: a longer one fires at once. */
const TIMER_MAX_MS = 2 ** 31 - 1;

describe.each(engines)('a duration past the timer limit, on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());

  // A lock wait of 3e9 ms once passed: its timer fired at once, and every request answered 503.
  it('is refused when the configuration is built, naming the option and its range', () => {
    const build = () => idempotency({ store: postgresStore(engine.database), lockTimeoutMs: 3_000_000_000 });
    expect(build).toThrow(/lockTimeoutMs.*2147483647/);
    let thrown: unknown;
    try {
      build();
    } catch (error) {
      thrown = error;
    }
    expect(isRetrysafeError(thrown, 'misuse')).toBe(true);
  });

  it('is accepted up to the limit itself', () => {
    const config = idempotency({ store: postgresStore(engine.database), lockTimeoutMs: TIMER_MAX_MS });
    expect(config.lockTimeoutMs).toBe(TIMER_MAX_MS);
  });
});

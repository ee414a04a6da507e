import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atomic, type FetchRequest } from '../../src/adapters/fetch/index.js';
import type { AtomicRoute } from '../../src/core/route.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { postgresStore } from '../../src/postgres/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { manualClock } from '../../src/testing/manual-clock.js';
import { waitFor } from '../support/wait-for.js';
import { type Engine, engines } from '../support/engines.js';

describe.each(engines)('the lock wait on the configured clock, on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());

  it('gives a duplicate 409 once its lock wait has passed on the clock, while the first attempt still runs', async (context) => {
    // PGlite runs one transaction at a time: there the duplicate waits for the connection, not for the lock.
    if (!engine.concurrent) context.skip();
    let release = (): void => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    let running = false;
    const route: AtomicRoute<FetchRequest, unknown, SqlClient> = {
      operation: 'orders.create@1',
      tenant: () => 'tenant-a',
      async handler() {
        running = true;
        await released;
        return { status: 201, body: { ok: true } };
      },
    };
    const clock = manualClock();
    // A minute's wait: only the clock can end it within the test.
    const handle = atomic(
      idempotency({ store: postgresStore(engine.database), lockTimeoutMs: 60_000, activity: false, clock }),
      route,
    );
    const key = randomUUID();
    const send = () =>
      handle(
        new Request('http://shop.test/orders', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'idempotency-key': key },
          body: '{}',
        }),
        undefined,
      );
    const first = send();
    await waitFor(() => running);
    const duplicate = send();
    // The duplicate's store budget and its wait for the first attempt, both on the clock.
    await waitFor(() => clock.pending() === 2);
    await clock.advance(60_000);

    expect((await duplicate).status).toBe(409);
    release();
    expect((await first).status).toBe(201);
  });
});

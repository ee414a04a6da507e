import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { atomic } from '../../src/adapters/fetch/index.js';
import { idempotency } from '../../src/modes/idempotency.js';
import { postgresStore } from '../../src/postgres/index.js';
import { type Engine, engines } from '../support/engines.js';

/** A route that binds an account-switching header into the fingerprint, as a route that acts on behalf of another account should. */
describe.each(engines)('authority-relevant headers in the fingerprint on $name', (factory) => {
  let engine: Engine;
  let runs = 0;
  let handle: (request: Request, context: undefined) => Promise<Response>;

  beforeAll(async () => {
    engine = await factory.open();
    handle = atomic(idempotency({ store: postgresStore(engine.database) }), {
      operation: 'transfers.create@1',
      tenant: ({ request }) => request.headers.get('x-tenant') ?? undefined,
      fingerprint: ({ request }, input) => ({ input, onBehalfOf: request.headers.get('x-on-behalf-of') }),
      handler() {
        runs += 1;
        return Promise.resolve({ status: 201, body: { run: runs } });
      },
    });
  });
  afterAll(() => engine.close());

  const send = (key: string, onBehalfOf: string | undefined, body: unknown) =>
    handle(
      new Request('http://service.test/transfers', {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'idempotency-key': key,
          'x-tenant': 't1',
          ...(onBehalfOf === undefined ? {} : { 'x-on-behalf-of': onBehalfOf }),
        },
        body: JSON.stringify(body),
      }),
      undefined,
    );

  it('answers 422 when the same key comes with another on-behalf-of header, and replays when it is the same', async () => {
    const key = randomUUID();
    const first = await send(key, 'acct-1', { amount: 10 });
    expect(first.status).toBe(201);
    const switched = await send(key, 'acct-2', { amount: 10 });
    expect(switched.status).toBe(422);
    expect(((await switched.json()) as { type: string }).type).toBe(
      'https://retrysafe.dev/problems/fingerprint-mismatch',
    );
    const dropped = await send(key, undefined, { amount: 10 });
    expect(dropped.status).toBe(422);
    const same = await send(key, 'acct-1', { amount: 10 });
    expect(same.headers.get('idempotent-replayed')).toBe('true');
    expect(runs).toBe(1);
  });
});

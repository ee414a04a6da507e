import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { FetchRequest } from '../../src/adapters/fetch/index.js';
import type { LeasedRoute } from '../../src/modes/leased-route.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { engines } from '../support/engines.js';
import { useLeasedHarness } from './harness.js';
import type { PaymentInput } from './payment-route.js';

/** A port nothing listens on: taken from the system, then let go. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** The payment route, charging through a provider that is down: its step's fetch fails to connect. */
function unreachableProvider(port: number): LeasedRoute<FetchRequest, PaymentInput, SqlClient> {
  return {
    operation: 'payments.create@1',
    tenant: ({ request }) => request.headers.get('x-tenant') ?? undefined,
    async handler({ input, step }) {
      const charged = await step('charge', async (call) => {
        const answer = await fetch(`http://127.0.0.1:${port}/charges?access_token=tok_live_123`, {
          method: 'POST',
          headers: { 'idempotency-key': call.idempotencyKey, authorization: 'Bearer sk_live_abc' },
          body: JSON.stringify(input),
        });
        return answer.status;
      });
      return { status: 201, body: { charged } };
    },
  };
}

describe.each(engines)('the reason an operation became unknown, on $name', (factory) => {
  const service = useLeasedHarness(factory);

  it("keeps the failure's causes, not only fetch's wrapper: the refused connection is named", async () => {
    const port = await closedPort();
    service.setUp({ maxAttempts: 1 }, unreachableProvider(port));
    const key = randomUUID();
    await service.pay(key, { order: `ord-${key}`, amount: 1700 });

    const stopped = await service.state(key);
    expect(stopped?.state).toBe('unknown');
    expect(stopped?.reason).toContain('fetch failed');
    expect(stopped?.reason).toContain(`ECONNREFUSED 127.0.0.1:${port}`);
    expect(service.events.find((event) => event.type === 'unknown')).toMatchObject({ reason: stopped?.reason });
  });
});

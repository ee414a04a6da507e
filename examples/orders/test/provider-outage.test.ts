import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/support/database.js';
import { providerAdmin } from '../../provider/client.js';
import { startProvider } from '../../provider/provider.js';
import { placeOrder } from '../testing/checkout.js';
import { startProcess } from '../testing/child.js';
import { call, json } from '../testing/http.js';
import { A } from '../testing/service.js';
import { waitFor } from '../../../test/support/wait-for.js';

const PROBLEMS = 'https://retrysafe.dev/examples/orders/problems/';

describe('the service as a process, with its payment provider failing, then down', () => {
  it(
    'answers 502 provider-unavailable with Retry-After, never 500, and charges once when a retry gets through',
    { timeout: 180_000 },
    async () => {
      const db = await createTestDatabase();
      const dataDir = await mkdtemp(join(tmpdir(), 'orders-data-'));
      const provider = await startProvider({ faults: [{ mode: 'fail-before-charge', times: 1 }] });
      const admin = providerAdmin(provider.url);
      const service = await startProcess({ DATABASE_URL: db.url, DATA_DIR: dataDir, PROVIDER_URL: provider.url });
      let providerUp = true;
      try {
        const pay = (orderId: string, key: string) =>
          call(service.url, 'POST', `/v1/orders/${orderId}/payments`, { token: A.token, key });
        const expectProviderUnavailable = (answer: Awaited<ReturnType<typeof pay>>) => {
          expect({ status: answer.status, type: json(answer).type }).toEqual({
            status: 502,
            type: `${PROBLEMS}provider-unavailable`,
          });
          expect(answer.headers['content-type']).toBe('application/problem+json');
          expect(answer.headers['retry-after']).toMatch(/^\d+$/);
        };

        // The provider answers 503: nothing was charged.
        const failing = await placeOrder(service.url, A, 'c-provider-failing');
        expectProviderUnavailable(await pay(failing.id, 'k-pay-failing'));
        let retried = await pay(failing.id, 'k-pay-failing');
        await waitFor(
          async () => retried.status === 201 || (retried = await pay(failing.id, 'k-pay-failing')).status === 201,
          { what: 'the retried payment to go through' },
        );
        expect(retried.status).toBe(201);
        expect((await admin.stats()).charges).toBe(1);

        // Nothing listens where the provider was.
        await provider.close();
        providerUp = false;
        const down = await placeOrder(service.url, A, 'c-provider-down');
        expectProviderUnavailable(await pay(down.id, 'k-pay-down'));
        expect(await service.kill('SIGTERM')).toBe(0);
      } finally {
        await service.kill('SIGKILL');
        if (providerUp) await provider.close();
        await db.drop();
        await rm(dataDir, { recursive: true, force: true });
      }
    },
  );
});

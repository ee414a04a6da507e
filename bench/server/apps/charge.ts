import type { ProviderClient } from '../../../examples/provider/client.js';
import type { AppEnv } from '../app-env.js';
import type { OrderInput } from '../orders.js';

export function providerUrlOf(env: AppEnv): string {
  if (env.providerUrl === undefined) throw new Error('BENCH_APP_PROVIDER_URL is required for this app');
  return env.providerUrl;
}

/** Charges the order's amount under the given downstream key; returns the charge id. */
export async function chargeOrder(
  provider: ProviderClient,
  idempotencyKey: string,
  input: OrderInput,
  signal?: AbortSignal,
  fencingToken?: number,
): Promise<string> {
  const result = await provider.charge(
    { idempotencyKey, fencingToken, amountCents: input.quantity * 100, currency: 'EUR', reference: input.sku },
    signal,
  );
  if (result.kind !== 'charged') throw new Error(`the provider answered ${result.status}`);
  return result.charge.id;
}

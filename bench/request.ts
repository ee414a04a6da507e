/** What every load sends to POST /orders, besides its Idempotency-Key. */
export const TENANT = 'bench';
/** Every request sends the same body, so replays match the original's fingerprint. */
export const ORDER_BODY = JSON.stringify({ sku: 'sku-42', quantity: 2 });
export const ORDER_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'application/json',
  'x-tenant': TENANT,
};

/** The tenants of a load's requests, each in turn. */
export function tenantStream(tenants: readonly string[]): () => string {
  let next = 0;
  return () => tenants[next++ % tenants.length] ?? TENANT;
}

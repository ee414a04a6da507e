/** What the load sends to the reference service's `POST /v1/orders` (scenario R). */
export const SERVICE_TOKEN = 'bench-token';
export const SERVICE_TENANT = 'bench';

/** The service orders a cart once per version: every key checks out a cart of its own, named after it. */
export const serviceOrderBody = (key: string): string =>
  JSON.stringify({ cart_id: key, cart_version: 1, delivery_option: 'standard' });

/** `count` carts named `${prefix}0` …, at version 1, for the keys a load will send. $1 tenant, $2 prefix, $3 count. */
export const INSERT_CARTS = `INSERT INTO carts (tenant, cart_id, cart_version, items)
SELECT $1, $2 || g, 1, '[{"sku":"GADGET-2","qty":1},{"sku":"WIDGET-1","qty":2}]'::jsonb FROM generate_series(0, $3 - 1) AS g`;

import { setTimeout as sleep } from 'node:timers/promises';
import { PGlite } from '@electric-sql/pglite';
import { idempotentFetch } from 'retrysafe/client';
import { fromPGlite, migrate, portable } from 'retrysafe/postgres';
import { everyNth, startLossyProxy } from './lossy-proxy.js';
import { countOrders, startShop } from './shop.js';

/**
 * `npm run demo`: a shop behind a network that loses one answer in three after
 * the server has committed. The same orders are placed twice through it:
 * retried without keys, then with retrysafe/client. The database counts.
 */
const ORDERS = 12;
const ATTEMPTS = 5;
const NO_KEYS = 'without keys';
const WITH_CLIENT = 'retrysafe/client';

const lite = await PGlite.create();
const database = portable(fromPGlite(lite));
await migrate(database);
const shop = await startShop(database);
const proxy = await startLossyProxy(new URL(shop.url), everyNth(3));
const orders = `${proxy.url}/orders`;

console.log(
  `A shop at ${shop.url}, reached through a proxy that drops every third answer after the server has committed.`,
);
console.log(
  `Each client places ${ORDERS} orders and retries an attempt that got no answer, up to ${ATTEMPTS} attempts.\n`,
);
console.log(row('client', 'order', 'attempts', 'answer', 'answers dropped so far'));

/** The usual retry loop without a key: every attempt that reaches the server is a new order. */
async function withoutKeys(sku: string): Promise<{ attempts: number; answer: string }> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      const response = await fetch(orders, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ sku, client: NO_KEYS }),
      });
      await response.body?.cancel();
      return { attempts: attempt, answer: String(response.status) };
    } catch (error) {
      if (attempt === ATTEMPTS) return { attempts: attempt, answer: `no answer (${(error as Error).message})` };
      await sleep(50);
    }
  }
}

async function withClient(sku: string): Promise<{ attempts: number; answer: string }> {
  const { response, attempts, replayed } = await idempotentFetch(orders, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ sku, client: WITH_CLIENT }),
    retry: { attempts: ATTEMPTS, baseDelayMs: 50, maxDelayMs: 200 },
  });
  await response.body?.cancel();
  return { attempts, answer: `${response.status}${replayed ? ' replayed' : ''}` };
}

for (const [client, place] of [
  [NO_KEYS, withoutKeys],
  [WITH_CLIENT, withClient],
] as const) {
  for (let order = 1; order <= ORDERS; order += 1) {
    const { attempts, answer } = await place(`SKU-${order}`);
    console.log(row(client, String(order), String(attempts), answer, String(proxy.dropped())));
  }
}

const counted = await countOrders(database);
console.log("\nThe database's own count (SELECT client, count(*) FROM demo_orders GROUP BY client):");
for (const client of [NO_KEYS, WITH_CLIENT]) {
  const rows = counted.get(client) ?? 0;
  const duplicates = rows - ORDERS;
  console.log(
    `  ${client.padEnd(18)} ${ORDERS} orders placed, ${rows} in the database: ${duplicates === 0 ? 'no duplicates' : `${duplicates} duplicates`}`,
  );
}

await proxy.close();
await shop.close();
await lite.close();

function row(...cells: readonly string[]): string {
  const widths = [18, 6, 9, 14, 8];
  return cells.map((cell, index) => cell.padEnd(widths[index] ?? 0)).join(' ');
}

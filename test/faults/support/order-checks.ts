import { setTimeout as sleep } from 'node:timers/promises';
import { expect } from 'vitest';
import type { ServiceProcess } from '../../../examples/orders/testing/child.js';
import { type KeyHistory, placeOrder, successesByKey, unexpectedAnswers } from './storm.js';

/** A query on the database the service used, returning the first column of the first row. */
export type Count = (sql: string) => Promise<number | undefined>;

/**
 * What every order storm must leave, whatever the fault: the service still
 * running, no answer but 201, 503 or 409 with Retry-After (a network error
 * only from `killed`), every 201 a client
 * saw replayed byte for byte, and, counted in SQL, one order and one
 * completed record per key and nothing left in progress.
 */
export async function expectOrdersSettled(
  service: ServiceProcess,
  keyOf: ReadonlyMap<string, string>,
  histories: readonly KeyHistory[],
  count: Count,
  killed?: string,
): Promise<void> {
  expect(unexpectedAnswers(histories, killed), service.output().slice(-3000)).toEqual([]);
  expect(await Promise.race([service.exited, sleep(0, 'running')]), service.output().slice(-3000)).toBe('running');
  const seen = successesByKey(histories);
  for (const [key, cart] of keyOf) {
    const bodies = seen.get(key) ?? [];
    expect(bodies.length, `a 201 for the key of ${cart}`).toBeGreaterThan(0);
    const replay = await placeOrder(service.url, cart, key);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    for (const body of bodies) expect(body.equals(replay.body)).toBe(true);
  }
  const carts = [...keyOf.values()];
  // Keys and carts are made by `cartKeys`: letters, digits and dashes only.
  const list = (values: readonly string[]) => values.map((value) => `'${value}'`).join(', ');
  expect(await count(`SELECT count(*)::int AS n FROM orders WHERE cart_id IN (${list(carts)})`)).toBe(carts.length);
  expect(
    await count(
      'SELECT count(*)::int AS n FROM (SELECT tenant, cart_id FROM orders GROUP BY tenant, cart_id HAVING count(*) > 1) AS twice',
    ),
  ).toBe(0);
  expect(
    await count(
      `SELECT count(*)::int AS n FROM retrysafe_operations WHERE operation = 'orders.create@1' AND state = 'completed' AND key IN (${list([...keyOf.keys()])})`,
    ),
  ).toBe(carts.length);
  expect(await count("SELECT count(*)::int AS n FROM retrysafe_operations WHERE state = 'in_progress'")).toBe(0);
}

/** `count` carts named `prefix-0…`, each with a key of its own: key → cart. */
export function cartKeys(prefix: string, count: number): Map<string, string> {
  return new Map(
    Array.from({ length: count }, (_, index) => [
      `${prefix}-key-${index}-${Math.random().toString(36).slice(2)}`,
      `${prefix}-${index}`,
    ]),
  );
}

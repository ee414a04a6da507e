import { afterAll, beforeAll, expect, it } from 'vitest';
import { portable } from '../../src/postgres/index.js';
import { fastifyAdapter, type RunningApp, startApp } from '../support/apps.js';
import { describeCitus, installRetrysafe, sharedCitusCluster, workerOf } from '../support/citus-cluster.js';
import { serverLayers, type ServerLayer } from '../support/engines.js';
import { type Received, send } from '../support/http.js';

/** The tokens of `test/support/apps.ts` and the tenant each names. */
const TENANTS = [
  ['token-a', 'tenant-a'],
  ['token-b', 'tenant-b'],
  ['token-longest-tenant', 't'.repeat(255)],
] as const;

interface Node {
  readonly app: RunningApp;
  readonly layer: ServerLayer;
}

/**
 * One client: sends until a final answer, again at once after a 409 or 503
 * with Retry-After, or after a connection the busy server reset.
 */
async function client(url: string, token: string, key: string): Promise<Received> {
  for (;;) {
    const answer = await send('POST', `${url}/orders`, {
      headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
      body: { sku: key, qty: 1 },
      timeoutMs: 120_000,
    }).catch((error: unknown) => {
      if ((error as { code?: string }).code === 'ECONNRESET') return undefined;
      throw error;
    });
    if (answer === undefined) continue;
    if (!((answer.status === 409 || answer.status === 503) && answer.headers['retry-after'] !== undefined))
      return answer;
  }
}

describeCitus('atomic mode on Citus: storms of duplicates through the coordinator and the workers', () => {
  const cluster = sharedCitusCluster();

  beforeAll(async () => {
    await installRetrysafe(cluster());
  });

  it('spreads the tenants of the storms over both workers', async () => {
    const workers = await Promise.all(TENANTS.map(([, tenant]) => workerOf(cluster(), tenant)));
    expect(new Set(workers)).toEqual(new Set(cluster().workers.map((worker) => worker.port)));
  });

  for (const layerId of ['pg', 'postgres-js'] as const) {
    let nodes: Node[] = [];

    const start = async () => {
      nodes = await Promise.all(
        cluster().nodes.map(async (node) => {
          const layer = serverLayers[layerId](node.url());
          return { layer, app: await startApp(fastifyAdapter, portable(layer.database)) };
        }),
      );
    };
    afterAll(async () => {
      for (const { app, layer } of nodes) {
        await app.close();
        await layer.end();
      }
    });

    /** Sends `clients` concurrent clients per key, through the apps given, and checks every key's one effect. */
    const stormAndCheck = async (
      keys: readonly (readonly [token: string, tenant: string, key: string])[],
      clients: number,
      through: readonly RunningApp[],
    ) => {
      const answers = await Promise.all(
        keys.flatMap(([token, , key], k) =>
          Array.from({ length: clients }, (_, c) => {
            const app = through[(k + c) % through.length] as RunningApp;
            return client(app.url, token, key).then((answer) => ({ key, answer }));
          }),
        ),
      );
      for (const [, tenant, key] of keys) {
        const mine = answers.filter((answer) => answer.key === key).map(({ answer }) => answer);
        expect(
          mine.map((answer) => answer.status),
          key,
        ).toEqual(mine.map(() => 201));
        const first = mine[0]?.bodyBytes;
        for (const answer of mine) expect(answer.bodyBytes.equals(first ?? Buffer.alloc(0)), key).toBe(true);
        expect(
          mine.filter((answer) => answer.headers['idempotent-replayed'] === undefined),
          key,
        ).toHaveLength(1);
        const runs = nodes.flatMap(({ app }) =>
          app.state.invocations.filter((run) => run.tenant === tenant && run.key === key),
        );
        expect(runs, `handler runs of ${key}`).toHaveLength(1);
      }
      const coordinator = cluster().coordinator;
      const orders = await coordinator.query<{ tenant: string; sku: string; n: number }>(
        'SELECT tenant, sku, count(*)::int AS n FROM orders WHERE sku = ANY($1) GROUP BY tenant, sku ORDER BY sku',
        [keys.map(([, , key]) => key)],
      );
      expect(orders).toEqual(
        keys.map(([, tenant, key]) => ({ tenant, sku: key, n: 1 })).sort((a, b) => a.sku.localeCompare(b.sku)),
      );
      const [records] = await coordinator.query<{ n: number }>(
        'SELECT count(*)::int AS n FROM retrysafe_operations WHERE key = ANY($1)',
        [keys.map(([, , key]) => key)],
      );
      expect(records?.n).toBe(keys.length);
    };

    const spread = (prefix: string) =>
      Array.from({ length: 50 }, (_, k) => {
        const [token, tenant] = TENANTS[k % TENANTS.length] as (typeof TENANTS)[number];
        return [token, tenant, `${prefix}-${k}`] as const;
      });

    it(`through ${layerId}: 200 clients on one key, all on the coordinator, run the handler once`, async () => {
      await start();
      const coordinatorApp = nodes[0]?.app as RunningApp;
      await stormAndCheck([['token-a', 'tenant-a', `${layerId}-one`]], 200, [coordinatorApp]);
    }, 600_000);

    it(`through ${layerId}: 50 keys x 20 clients over three tenants, all on the coordinator`, async () => {
      await stormAndCheck(spread(`${layerId}-coordinator`), 20, [nodes[0]?.app as RunningApp]);
    }, 600_000);

    it(`through ${layerId}: 50 keys x 20 clients, each key's clients on the coordinator and both workers`, async () => {
      await stormAndCheck(
        spread(`${layerId}-every-node`),
        20,
        nodes.map(({ app }) => app),
      );
    }, 600_000);

    it(`through ${layerId}: a request without a tenant gets 401 problem+json, on every node`, async () => {
      for (const { app } of nodes) {
        const answer = await send('POST', `${app.url}/orders`, {
          headers: { 'idempotency-key': `${layerId}-anonymous` },
          body: { sku: 'A', qty: 1 },
        });
        expect(answer.status).toBe(401);
        expect(answer.headers['content-type']).toMatch(/^application\/problem\+json/);
      }
    });
  }
});

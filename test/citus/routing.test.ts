import { beforeAll, expect, it } from 'vitest';
import { CLAIM_ATOMIC } from '../../src/postgres/sql/claim-atomic.js';
import { COMPLETE_ATOMIC } from '../../src/postgres/sql/complete-atomic.js';
import { READ_RECORD } from '../../src/postgres/sql/read-record.js';
import { describeCitus, installRetrysafe, shardOf, sharedCitusCluster } from '../support/citus-cluster.js';

const FINGERPRINT = Buffer.alloc(32, 0xab);

/** Atomic mode's request path, with the values the store sends for one identity. */
const statements = (tenant: string) =>
  [
    ['claim', CLAIM_ATOMIC.text, [tenant, 'orders.create@1', 'k1', '30000ms']],
    ['read record', READ_RECORD.text, [tenant, 'orders.create@1', 'k1']],
    [
      'complete',
      COMPLETE_ATOMIC.text,
      [
        tenant,
        'orders.create@1',
        'k1',
        FINGERPRINT,
        null,
        'completed',
        201,
        '{}',
        Buffer.from('{}'),
        null,
        60,
        120,
        false,
      ],
    ],
  ] as const;

describeCitus("where atomic mode's statements run on Citus", () => {
  const cluster = sharedCitusCluster();

  beforeAll(async () => {
    await installRetrysafe(cluster());
  });

  it.each(['tenant-a', 'tenant-b'])(
    "each is one router task on %s's shard, on its worker, whichever node the client reached",
    async (tenant) => {
      const { shard, port: worker } = await shardOf(cluster(), tenant);
      for (const node of cluster().nodes) {
        for (const [name, text, values] of statements(tenant)) {
          const plan = (await node.query<{ 'QUERY PLAN': string }>(`EXPLAIN (VERBOSE) ${text}`, [...values]))
            .map((row) => row['QUERY PLAN'])
            .join('\n');
          const where = `${name} from ${node.name}`;
          expect(plan, where).toMatch(/Custom Scan \(Citus Adaptive\)/);
          expect(plan, where).toMatch(/Task Count: 1\b/);
          expect(plan, where).not.toMatch(/Distributed Subplan/);
          // The task names the tenant's shard; Citus shows the node of a read (of an INSERT it shows no remote plan).
          expect(plan, where).toContain(`retrysafe_operations_${shard} `);
          const shown = [...plan.matchAll(/Node: host=\S+ port=(\d+)/g)].map((match) => Number(match[1]));
          expect(shown, where).toEqual(name === 'complete' ? [] : [worker]);
          // The lock and its timeout are evaluated on that worker, inside the task.
          if (name === 'claim') expect(plan.slice(plan.indexOf('Node:')), where).toMatch(/pg_try_advisory_xact_lock/);
        }
      }
    },
  );
});

import { expect, it } from 'vitest';
import { describeCitus, sharedCitusCluster } from '../support/citus-cluster.js';

describeCitus('a Citus cluster of a coordinator and two workers', () => {
  const cluster = sharedCitusCluster();

  it('spreads a distributed table over both workers and takes its queries on any node', async () => {
    const { coordinator, workers, nodes } = cluster();
    const active = await coordinator.query<{ nodeport: number }>(
      "SELECT nodeport FROM pg_dist_node WHERE isactive AND noderole = 'primary' AND shouldhaveshards",
    );
    expect(active.map((row) => row.nodeport).sort()).toEqual(workers.map((worker) => worker.port).sort());

    await coordinator.query('CREATE TABLE probe (tenant text, n int)');
    await coordinator.query("SELECT create_distributed_table('probe', 'tenant')");
    await coordinator.query("INSERT INTO probe SELECT 't' || i, i FROM generate_series(1, 20) AS i");
    const placements = await coordinator.query<{ nodeport: number }>(
      "SELECT DISTINCT nodeport FROM pg_dist_shard_placement JOIN pg_dist_shard USING (shardid) WHERE logicalrelid = 'probe'::regclass",
    );
    expect(placements.map((row) => row.nodeport).sort()).toEqual(workers.map((worker) => worker.port).sort());
    for (const node of nodes) {
      const [row] = await node.query<{ n: number }>('SELECT count(*)::int AS n FROM probe');
      expect(row?.n).toBe(20);
    }
  });
});

import { describe, expect, it } from 'vitest';
import { remoteCommands, spreadTenants } from '../../bench/citus-counts.js';

describe("the Citus bench's tenants", () => {
  it('takes as many from each worker, alternating between the workers', () => {
    const placements = [
      { tenant: 'a', port: 7002 },
      { tenant: 'b', port: 7001 },
      { tenant: 'c', port: 7002 },
      { tenant: 'd', port: 7002 },
      { tenant: 'e', port: 7001 },
    ];
    expect(spreadTenants(placements, 2)).toEqual(['b', 'a', 'e', 'c']);
  });

  it('refuses tenants that do not reach both workers as often', () => {
    expect(() => spreadTenants([{ tenant: 'a', port: 7001 }], 1)).toThrow(/on 1 worker/);
    expect(() =>
      spreadTenants(
        [
          { tenant: 'a', port: 7001 },
          { tenant: 'b', port: 7002 },
          { tenant: 'c', port: 7002 },
        ],
        2,
      ),
    ).toThrow(/worker 7001 holds 1 of the tenants, not 2/);
  });
});

describe("the coordinator's log of remote commands", () => {
  // As a Citus 13.2 coordinator logged them: a transaction on one worker, then one on two, which prepares on both.
  const log = `2026-12-07 02:17:48.850 UTC [20199] LOG:  starting maintenance daemon on database 5 user 10
2026-12-07 02:17:49.022 UTC [20216] NOTICE:  issuing BEGIN TRANSACTION ISOLATION LEVEL READ COMMITTED;SELECT assign_distributed_transaction_id(0, 5, '2026-12-07 02:17:49.018231+00');
2026-12-07 02:17:49.022 UTC [20216] DETAIL:  on server postgres@127.0.0.1:27512 connectionId: 1
2026-12-07 02:17:49.023 UTC [20216] NOTICE:  issuing INSERT INTO public.t_102032 (tenant, n) VALUES ('a'::text, 1)
2026-12-07 02:17:49.023 UTC [20216] DETAIL:  on server postgres@127.0.0.1:27512 connectionId: 1
2026-12-07 02:17:49.024 UTC [20216] NOTICE:  issuing COMMIT
2026-12-07 02:17:49.024 UTC [20216] DETAIL:  on server postgres@127.0.0.1:27512 connectionId: 1
2026-12-07 02:17:49.024 UTC [20216] NOTICE:  issuing BEGIN TRANSACTION ISOLATION LEVEL READ COMMITTED;SELECT assign_distributed_transaction_id(0, 6, '2026-12-07 02:17:49.024685+00');
2026-12-07 02:17:49.024 UTC [20216] DETAIL:  on server postgres@127.0.0.1:27512 connectionId: 1
2026-12-07 02:17:49.024 UTC [20216] NOTICE:  issuing INSERT INTO public.t_102032 (tenant, n) VALUES ('a'::text, 2)
2026-12-07 02:17:49.024 UTC [20216] DETAIL:  on server postgres@127.0.0.1:27512 connectionId: 1
2026-12-07 02:17:49.028 UTC [20216] NOTICE:  issuing BEGIN TRANSACTION ISOLATION LEVEL READ COMMITTED;SELECT assign_distributed_transaction_id(0, 6, '2026-12-07 02:17:49.024685+00');
2026-12-07 02:17:49.028 UTC [20216] DETAIL:  on server postgres@127.0.0.1:31159 connectionId: 2
2026-12-07 02:17:49.029 UTC [20216] NOTICE:  issuing INSERT INTO public.t_102023 (tenant, n) VALUES ('b'::text, 2)
2026-12-07 02:17:49.029 UTC [20216] DETAIL:  on server postgres@127.0.0.1:31159 connectionId: 2
2026-12-07 02:17:49.029 UTC [20216] NOTICE:  issuing PREPARE TRANSACTION 'citus_0_20216_6_0'
2026-12-07 02:17:49.029 UTC [20216] DETAIL:  on server postgres@127.0.0.1:27512 connectionId: 1
2026-12-07 02:17:49.029 UTC [20216] NOTICE:  issuing PREPARE TRANSACTION 'citus_0_20216_6_1'
2026-12-07 02:17:49.029 UTC [20216] DETAIL:  on server postgres@127.0.0.1:31159 connectionId: 2
2026-12-07 02:17:49.030 UTC [20216] NOTICE:  issuing COMMIT PREPARED 'citus_0_20216_6_0'
2026-12-07 02:17:49.030 UTC [20216] DETAIL:  on server postgres@127.0.0.1:27512 connectionId: 1
2026-12-07 02:17:49.030 UTC [20216] NOTICE:  issuing COMMIT PREPARED 'citus_0_20216_6_1'
2026-12-07 02:17:49.030 UTC [20216] DETAIL:  on server postgres@127.0.0.1:31159 connectionId: 2
`;

  it('counts each command once, by the worker it went to and by its first word', () => {
    const counted = remoteCommands(log);
    expect(counted.byWorker).toEqual(
      new Map([
        [27512, 7],
        [31159, 4],
      ]),
    );
    expect(counted.byKind).toEqual(
      new Map([
        ['BEGIN', 3],
        ['INSERT', 3],
        ['COMMIT', 3],
        ['PREPARE', 2],
      ]),
    );
    expect(counted.prepared).toBe(2);
  });

  it('pairs a command with the DETAIL of its own backend when two backends interleave', () => {
    const counted = remoteCommands(
      [
        '2026-12-07 02:17:49.022 UTC [1] NOTICE:  issuing COMMIT',
        "2026-12-07 02:17:49.022 UTC [2] NOTICE:  issuing PREPARE TRANSACTION 'citus_0_2_6_0'",
        '2026-12-07 02:17:49.022 UTC [2] DETAIL:  on server postgres@127.0.0.1:7002 connectionId: 4',
        '2026-12-07 02:17:49.022 UTC [1] DETAIL:  on server postgres@127.0.0.1:7001 connectionId: 3',
      ].join('\n'),
    );
    expect(counted.byWorker).toEqual(
      new Map([
        [7002, 1],
        [7001, 1],
      ]),
    );
    expect(counted.prepared).toBe(1);
  });

  it('fails on a command whose worker is not in the text read', () => {
    expect(() => remoteCommands(log.split('\n').slice(0, 2).join('\n'))).toThrow(
      /1 logged command\(s\) name no worker/,
    );
  });
});

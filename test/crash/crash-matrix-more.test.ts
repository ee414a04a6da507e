import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../src/core/crash-point.js';
import { downstreamKey } from '../../src/modes/downstream-key.js';
import { runProgram } from '../support/child.js';
import { retrysafe } from '../cli/run-cli.js';
import { RECOVER, crashLayers, useCrashRig } from './crash-rig.js';
import { waitFor } from '../support/wait-for.js';

describe.each(crashLayers)(
  'crash matrix through %s: atomic orders, racing and paused workers, and an outcome left unknown',
  (layer) => {
    const rig = useCrashRig(layer);
    const { env, service, send, retryUntilSettled, record, count, crashAt, admin } = rig;

    const atomicPoints: readonly CrashPoint[] = [
      'before-claim',
      'after-claim',
      'before-commit',
      'after-commit',
      'while-serialising',
    ];
    it.each(atomicPoints)(
      'atomic order killed at %s: one order, a completed record equal to the final answer',
      async (point) => {
        const key = randomUUID();
        const sku = `sku-${key}`;
        await crashAt(point, '/orders', key, { sku });
        const restarted = await service();
        const final = await retryUntilSettled(restarted.url, '/orders', key, { sku });
        expect(final.status).toBe(201);
        expect((await record('orders.create@1', key))?.response_body?.toString()).toBe(final.body);
        expect(await count('SELECT count(*)::int AS n FROM orders WHERE sku = $1', sku)).toBe(1);
        await restarted.child.kill();
      },
    );

    it('two recovery workers racing on one expired lease: exactly one finishes it', async () => {
      const key = randomUUID();
      const body = { order: `ord-${key}`, amount: 800 };
      await crashAt('after-step-call', '/payments', key, body);
      await sleep(2500);
      const reports = (await Promise.all([runProgram(RECOVER, env()), runProgram(RECOVER, env())])).map(
        (out) => JSON.parse(out) as { completed: number; lost: number },
      );
      expect(reports.reduce((n, report) => n + report.completed, 0)).toBe(1);
      expect((await record('payments.create@1', key))?.state).toBe('completed');
      expect(
        await admin.count(downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge')),
      ).toBe(1);
      expect(await count('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', body.order)).toBe(1);
    });

    it('a worker paused past its lease (SIGSTOP, SIGCONT) is fenced out after a recoverer took over', async () => {
      const key = randomUUID();
      const body = { order: `ord-${key}`, amount: 1200 };
      const paused = await service();
      await admin.control({ mode: 'hold', reference: body.order });
      const answer = send(paused.url, '/payments', key, body);
      await waitFor(async () => (await admin.stats()).held === 1, { what: 'the paused worker’s charge to be held' });
      paused.child.process.kill('SIGSTOP');
      await sleep(2500);
      const report = JSON.parse(await runProgram(RECOVER, env())) as { completed: number };
      expect(report.completed).toBe(1);
      // The paused worker's call goes on only now, with the fencing token the recoverer superseded.
      await admin.control({ mode: 'release' });
      paused.child.process.kill('SIGCONT');
      const staleAnswer = await answer;
      expect(staleAnswer.status).toBe(409);
      const stored = await record('payments.create@1', key);
      expect(stored?.state).toBe('completed');
      const replay = await send(paused.url, '/payments', key, body);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(replay.body).toBe(stored?.response_body?.toString());
      expect(
        await admin.count(downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge')),
      ).toBe(1);
      expect(await count('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', body.order)).toBe(1);
      await paused.child.kill();
    });

    it('killed after the charge while the provider cannot be asked: unknown, then settled by an operator and replayed', async () => {
      const key = randomUUID();
      const body = { order: `ord-${key}`, amount: 2700 };
      await crashAt('after-step-call', '/payments', key, body);
      const charge = downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge');
      await admin.control({ mode: 'fail-lookup', reference: charge, times: 5 });
      const restarted = await service({ MAX_ATTEMPTS: '1' });
      const stopped = await retryUntilSettled(restarted.url, '/payments', key, body);
      expect(stopped.status).toBe(409);
      expect(stopped.body).toContain('outcome-unknown');
      expect((await record('payments.create@1', key))?.state).toBe('unknown');
      expect(await count('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', body.order)).toBe(0);

      const settled = await retrysafe(
        [
          'resolve',
          'tenant-a',
          'payments.create@1',
          key,
          '--state',
          'completed',
          '--status',
          '201',
          '--body',
          '{"charged":true}',
          '--reason',
          'charge found in the provider dashboard',
        ],
        { DATABASE_URL: rig.databaseUrl() },
      );
      expect(settled.code).toBe(0);
      const replay = await send(restarted.url, '/payments', key, body);
      expect(replay.status).toBe(201);
      expect(replay.headers.get('idempotent-replayed')).toBe('true');
      expect(JSON.parse(replay.body)).toEqual({ charged: true });
      expect(await admin.count(charge)).toBe(1);
      await restarted.child.kill();
    });
  },
);

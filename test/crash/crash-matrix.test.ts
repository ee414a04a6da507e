import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CrashPoint } from '../../src/core/crash-point.js';
import { downstreamKey } from '../../src/modes/downstream-key.js';
import { crashLayers, useCrashRig } from './crash-rig.js';

describe.each(crashLayers)(
  'crash matrix through %s: a leased payment killed with SIGKILL at each named point',
  (layer) => {
    const { service, retryUntilSettled, record, count, crashAt, admin } = useCrashRig(layer);

    const leasedPoints: readonly CrashPoint[] = [
      'before-claim',
      'after-claim',
      'before-step-call',
      'after-step-call',
      'after-checkpoint',
      'before-local-commit',
      'after-local-commit',
      'before-complete',
      'after-complete',
      'while-serialising',
    ];
    it.each(leasedPoints)(
      'leased payment killed at %s: one charge, one payment, a terminal record equal to the final answer',
      async (point) => {
        const key = randomUUID();
        const body = { order: `ord-${key}`, amount: 2500 };
        await crashAt(point, '/payments', key, body);
        const restarted = await service();
        const final = await retryUntilSettled(restarted.url, '/payments', key, body);
        expect(final.status).toBe(201);
        const stored = await record('payments.create@1', key);
        expect(stored?.state).toBe('completed');
        expect(stored?.response_body?.toString()).toBe(final.body);
        expect(
          await admin.count(downstreamKey({ tenant: 'tenant-a', operation: 'payments.create@1', key }, 'charge')),
        ).toBe(1);
        expect(await count('SELECT count(*)::int AS n FROM payments WHERE order_id = $1', body.order)).toBe(1);
        await restarted.child.kill();
      },
    );
  },
);

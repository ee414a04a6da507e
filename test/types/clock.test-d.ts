import { describe, expectTypeOf, it } from 'vitest';
import { type Clock, type IdempotencyOptions, type RecoveryWorkerOptions, systemClock } from 'retrysafe';
import { type Clock as ClientClock, type RetryOptions, systemClock as clientSystemClock } from 'retrysafe/client';
import type { RelayOptions } from 'retrysafe/outbox';
import type { SweeperOptions } from 'retrysafe/retention';
import { manualClock, type ManualClock } from 'retrysafe/testing';
import type { WebhookWorkerOptions } from 'retrysafe/webhooks';

describe('the clock seam', () => {
  it('is one type, with the system clock and the manual clock as values of it', () => {
    expectTypeOf(systemClock).toEqualTypeOf<Clock>();
    expectTypeOf<ClientClock>().toEqualTypeOf<Clock>();
    expectTypeOf(clientSystemClock).toEqualTypeOf<Clock>();
    expectTypeOf(manualClock(0)).toEqualTypeOf<ManualClock>();
    expectTypeOf<ManualClock>().toMatchTypeOf<Clock>();
    expectTypeOf<ManualClock['advance']>().toEqualTypeOf<(ms: number) => Promise<void>>();
  });

  it('is optional wherever a user configures time', () => {
    expectTypeOf<IdempotencyOptions<unknown>['clock']>().toEqualTypeOf<Clock | undefined>();
    expectTypeOf<RetryOptions['clock']>().toEqualTypeOf<Clock | undefined>();
    expectTypeOf<SweeperOptions['clock']>().toEqualTypeOf<Clock | undefined>();
    expectTypeOf<RelayOptions<unknown>['clock']>().toEqualTypeOf<Clock | undefined>();
    expectTypeOf<WebhookWorkerOptions<unknown>['clock']>().toEqualTypeOf<Clock | undefined>();
    // The recovery worker runs on its configuration's clock.
    expectTypeOf<RecoveryWorkerOptions<unknown>>().not.toHaveProperty('clock');
  });
});

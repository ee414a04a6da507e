import { describe, expectTypeOf, it } from 'vitest';
import { count, milliseconds, type NumericOptions, type OptionRules } from '../../src/core/option-rules.js';

interface ExampleOptions {
  readonly name: string;
  readonly batchSize?: number;
  readonly idleMs?: number;
  readonly onError?: (error: unknown) => void;
}

describe('OptionRules', () => {
  it('names exactly the numeric members of an options type', () => {
    expectTypeOf<NumericOptions<ExampleOptions>>().toEqualTypeOf<'batchSize' | 'idleMs'>();
  });

  it('refuses a rules table that leaves a numeric option without a rule', () => {
    // @ts-expect-error idleMs has no rule
    const missing = { batchSize: count(1, 10) } satisfies OptionRules<ExampleOptions>;
    expectTypeOf(missing).not.toBeNever();
  });

  it('refuses a rule for a member that is not a numeric option', () => {
    const extra = {
      batchSize: count(1, 10),
      idleMs: milliseconds(1),
      // @ts-expect-error name is not a number
      name: count(1, 10),
    } satisfies OptionRules<ExampleOptions>;
    expectTypeOf(extra).not.toBeNever();
  });
});

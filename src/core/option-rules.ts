/**
 * The range of every numeric option, declared once beside each options type and
 * checked when the options are given: a value no timer, column or header can
 * hold fails at configuration, not later as a request answered 503. It imports
 * only the error catalogue, so the client (which runs in browsers) checks its
 * options here too, and throws its own error with the same sentence.
 */

import { RetrysafeError } from './errors.js';

/** The longest delay a timer keeps (Node's and browsers' setTimeout): a longer one fires at once. */
export const TIMER_MAX_MS = 2 ** 31 - 1;

/** The same limit in whole seconds, for a duration in seconds that arms a timer or asks a client to. */
export const TIMER_MAX_SECONDS = Math.floor(TIMER_MAX_MS / 1000);

/** A duration kept in the database rather than armed as a timer (retention, an age): at most 100 years. */
export const STORED_MAX_SECONDS = 100 * 365 * 86_400;

/** What the number counts: its unit in messages, and whether a fraction makes sense. */
export type NumberKind = 'milliseconds' | 'seconds' | 'whole seconds' | 'count' | 'bytes';

export interface NumberRule {
  readonly kind: NumberKind;
  readonly min: number;
  readonly max: number;
  /** Whether `Infinity` is accepted, as "no bound". */
  readonly unbounded: boolean;
}

/** A duration in milliseconds: a timer holds at most `TIMER_MAX_MS`. */
export function milliseconds(
  min: number,
  options: { readonly max?: number; readonly unbounded?: boolean } = {},
): NumberRule {
  return { kind: 'milliseconds', min, max: options.max ?? TIMER_MAX_MS, unbounded: options.unbounded ?? false };
}

/** A duration in seconds, fractions allowed. */
export function seconds(min: number, max: number): NumberRule {
  return { kind: 'seconds', min, max, unbounded: false };
}

/** A duration in whole seconds (a `Retry-After` value, a SQL age). */
export function wholeSeconds(min: number, max: number): NumberRule {
  return { kind: 'whole seconds', min, max, unbounded: false };
}

/** A whole number of things: attempts, rows, entries; `unbounded` also takes `Infinity`, as "no limit". */
export function count(min: number, max: number, options: { readonly unbounded?: boolean } = {}): NumberRule {
  return { kind: 'count', min, max, unbounded: options.unbounded ?? false };
}

/** A whole number of bytes. */
export function byteSize(min: number, max: number): NumberRule {
  return { kind: 'bytes', min, max, unbounded: false };
}

/** The members of `T` that hold a number. */
export type NumericOptions<T> = { [K in keyof T]-?: NonNullable<T[K]> extends number ? K : never }[keyof T] & string;

/**
 * One rule for each numeric member of `T`, and for nothing else: declared
 * with `satisfies OptionRules<…>`, a numeric option added without a rule does
 * not compile.
 */
export type OptionRules<T> = { readonly [K in NumericOptions<T>]: NumberRule };

const WHOLE: ReadonlySet<NumberKind> = new Set(['whole seconds', 'count', 'bytes']);

const WHAT: Readonly<Record<NumberKind, string>> = {
  milliseconds: 'a number of milliseconds',
  seconds: 'a number of seconds',
  'whole seconds': 'a whole number of seconds',
  count: 'a whole number',
  bytes: 'a whole number',
};

/** The range `rule` allows, in words: "a whole number from 1 to 1000". */
export function rangeOf(rule: NumberRule): string {
  return `${WHAT[rule.kind]} from ${rule.min} to ${rule.max}${rule.unbounded ? ', or Infinity for none' : ''}`;
}

/** Whether `value` is a number `rule` allows. */
export function fits(value: unknown, rule: NumberRule): boolean {
  if (rule.unbounded && value === Infinity) return true;
  return (
    typeof value === 'number' &&
    Number.isFinite(value) &&
    (!WHOLE.has(rule.kind) || Number.isInteger(value)) &&
    value >= rule.min &&
    value <= rule.max
  );
}

/** What is wrong with `value` as option `name` under `rule`; undefined when nothing is. */
export function numberProblem(name: string, value: unknown, rule: NumberRule): string | undefined {
  return fits(value, rule) ? undefined : `${name} must be ${rangeOf(rule)}, got ${String(value)}.`;
}

/**
 * The first problem among the options given (an absent or undefined option
 * takes its default and is not checked, unless it is `required`); `prefix`
 * names the object they sit in (`retryDelay.`).
 */
export function optionsProblem<T extends object>(
  rules: OptionRules<T>,
  options: T | undefined,
  prefix = '',
  required: readonly NumericOptions<T>[] = [],
): string | undefined {
  if (options === undefined) return undefined;
  const given = options as Readonly<Record<string, unknown>>;
  for (const [name, rule] of Object.entries<NumberRule>(rules)) {
    const value = given[name];
    if (value === undefined && !(required as readonly string[]).includes(name)) continue;
    const problem = numberProblem(prefix + name, value, rule);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** Throws `misuse` naming the first option out of its range, or a `required` one left out. */
export function checkOptions<T extends object>(
  rules: OptionRules<T>,
  options: T | undefined,
  prefix = '',
  required: readonly NumericOptions<T>[] = [],
): void {
  const problem = optionsProblem(rules, options, prefix, required);
  if (problem !== undefined) throw new RetrysafeError('misuse', problem);
}

import { CommanderError, type Option } from 'commander';
import { describe, expect, it } from 'vitest';
import { type NumberRule, rangeOf } from '../core/option-rules.js';
import type { NumberFlag } from './database-command.js';
import { createProgram } from './program.js';

/** The value placeholders of flags that take a number. */
const NUMERIC = /<(?:n|ms|seconds|status|port|version)>$/;

const parserRule = (option: Option): NumberRule | undefined =>
  (option.parseArg as Partial<NumberFlag> | undefined)?.rule;

/** Flags whose placeholder reads like a number's but that take text: `requeue --version` is a time to the microsecond. */
const TEXT = new Set(['requeue --version']);

/** Every numeric flag of every command, found on the program itself. */
const flags = createProgram()
  .commands.flatMap((command) => command.options.map((option) => ({ command: command.name(), option })))
  .filter(({ command, option }) => NUMERIC.test(option.flags) && !TEXT.has(`${command} ${option.long}`));

/** Values outside `rule`, as typed on a command line. */
function outside(rule: NumberRule): string[] {
  const whole = rule.kind === 'count' || rule.kind === 'bytes' || rule.kind === 'whole seconds';
  return [
    String(rule.max < 2 ** 31 ? 2 ** 31 : rule.max * 2),
    String(rule.max + 1),
    '-1',
    ...(rule.min > 0 ? ['0'] : []),
    'NaN',
    'Infinity',
    '1e3',
    ...(whole ? ['1.5'] : []),
  ].filter((value, i, all) => all.indexOf(value) === i);
}

describe('every numeric flag of the command line', () => {
  it('is found, and each has its range', () => {
    expect(flags.length).toBeGreaterThan(15);
    expect(flags.filter(({ option }) => parserRule(option) === undefined).map(({ option }) => option.flags)).toEqual(
      [],
    );
  });

  for (const { command, option } of flags) {
    it(`${command} ${option.long}: refuses a value out of range with a usage error naming the flag and its range`, async () => {
      const rule = parserRule(option)!;
      for (const value of outside(rule)) {
        let written = '';
        const program = createProgram({ writeOut: () => undefined, writeErr: (text) => (written += text) });
        const error = await program.parseAsync([command, option.long!, value], { from: 'user' }).then(
          () => undefined,
          (thrown: unknown) => thrown,
        );
        expect(error, `${option.long} ${value}`).toBeInstanceOf(CommanderError);
        expect((error as CommanderError).exitCode, `${option.long} ${value}`).not.toBe(0);
        expect(written.trim()).toBe(
          `error: option '${option.flags}' argument '${value}' is invalid. expected ${rangeOf(rule)}.`,
        );
      }
    });
  }
});

import { describe, expect, it } from 'vitest';
import { expectOneLineError, retrysafe } from './run-cli.js';

const COMMANDS = [
  'migrate',
  'distribute',
  'inspect',
  'stuck',
  'list',
  'search',
  'sweep',
  'recover',
  'resolve',
  'retry',
  'purge',
  'dead-letters',
  'requeue',
  'parked-events',
  'requeue-event',
  'console',
];

describe('retrysafe operations commands', () => {
  it('each answer --help with their usage, --json and --database-url', async () => {
    const runs = await Promise.all(COMMANDS.map((command) => retrysafe([command, '--help'])));
    runs.forEach((run, i) => {
      expect(run.code, COMMANDS[i]).toBe(0);
      expect(run.stdout).toContain(`Usage: retrysafe ${COMMANDS[i]}`);
      expect(run.stdout).toContain('--json');
      expect(run.stdout).toContain('--database-url <url>');
    });
  });

  it('reject an unknown option with one line and exit code 2', async () => {
    const run = await retrysafe(['sweep', '--fast']);
    expect(run.code).toBe(2);
    expect(expectOneLineError(run)).toBe("error: unknown option '--fast'");
  });
});

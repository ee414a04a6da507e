import { describe, expect, it } from 'vitest';
import { migrations } from '../../src/postgres/migrations/index.js';
import { schemaSql } from '../../src/postgres/schema.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

const latest = migrations.at(-1)?.version ?? 0;

describe('retrysafe schema --after', () => {
  it('prints the migrations after a version below the latest, and no earlier one', async () => {
    const run = await retrysafe(['schema', '--after', String(latest - 1)]);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe(schemaSql(latest - 1));
    expect(run.stdout).toContain(`-- retrysafe migration ${latest}:`);
    expect(run.stdout).not.toContain(`-- retrysafe migration ${latest - 1}:`);
  });

  it('at the latest version prints a script that applies nothing and says so, on stdout and stderr', async () => {
    const run = await retrysafe(['schema', '--after', String(latest)]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(schemaSql(latest));
    expect(run.stdout).not.toContain('-- retrysafe migration');
    expect(run.stdout).toContain(`-- Nothing after version ${latest}: it is this retrysafe's latest migration.`);
    expect(run.stderr).toBe(`retrysafe schema: nothing after version ${latest}, this retrysafe's latest.\n`);
  });

  it('refuses a version newer than the latest migration with schema-too-new, exit code 1, and prints no script', async () => {
    const run = await retrysafe(['schema', '--after', String(latest + 1)]);
    expect(run.code).toBe(1);
    expect(expectOneLineError(run)).toBe(
      `retrysafe schema: schema-too-new: version ${latest + 1} is newer than this retrysafe's latest migration (${latest}); upgrade retrysafe to get its migrations.`,
    );
  });

  it.each(['-1', '1.5', '', 'latest', '1e3', '99999999999999999999'])(
    'refuses %j as a usage error, exit code 2, in one line',
    async (version) => {
      const run = await retrysafe(['schema', '--after', version]);
      expect(run.code).toBe(2);
      expect(expectOneLineError(run)).toBe(
        `error: option '--after <version>' argument '${version}' is invalid. expected a whole number from 0 to 9007199254740991.`,
      );
    },
  );
});

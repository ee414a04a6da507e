import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

/** Every command that reads retrysafe's tables, with the arguments it needs. */
const COMMANDS: readonly (readonly string[])[] = [
  ['stuck'],
  ['inspect', 'tenant-a', 'orders.create@1', 'k-1'],
  ['sweep'],
  ['recover', '--once'],
  ['resolve', 'tenant-a', 'orders.create@1', 'k-1', '--state', 'failed', '--status', '500', '--reason', 'checked'],
];

describe('commands on a database that was never migrated', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase({ migrated: false });
  });
  afterAll(() => db.close());

  it.each(COMMANDS.map((args) => [args[0] ?? '', args] as const))(
    '%s says the schema is missing and to run retrysafe migrate',
    async (name, args) => {
      const run = await retrysafe([...args, '--database-url', db.url]);
      expect(run.code).toBe(1);
      expect(expectOneLineError(run)).toBe(
        `retrysafe ${name}: the retrysafe tables are missing from this database; run "retrysafe migrate" with the same database URL first.`,
      );
    },
  );
});

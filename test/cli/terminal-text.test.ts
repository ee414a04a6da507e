import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertRecord } from '../retention/records.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { retrysafe } from './run-cli.js';

/**
 * Tenants, keys and reasons come from an application's callers: escape
 * sequences stored in them (a window title, a cleared screen, a carriage
 * return that overwrites a line, a right-to-left override) reach the
 * operator's terminal as visible `\uXXXX`, never as the characters, from every
 * command that prints them; `--json` stays JSON that reads back the same.
 */
const TENANT = 'tenant-\u001b]0;pwned\u0007';
const KEY = 'key-\u001b[2J\u009b31m\u202e';
const REASON = 'the provider\r\u001b[1Aall fine\u007f';
/** A raw control character, as a terminal acts on it: any C0 control but line feed and tab, DEL, C1, bidi. */
// eslint-disable-next-line no-control-regex -- the characters themselves are what is looked for
const RAW = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;

describe('the command line’s output of stored text', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
    for (const key of [KEY, 'key-x'])
      await insertRecord(db.database, { tenant: TENANT, key, state: 'unknown', mode: 'leased', reason: REASON });
  });
  afterAll(() => db.close());

  const run = (...args: string[]) => retrysafe([...args, '--database-url', db.url]);
  const commands: Readonly<Record<string, readonly string[]>> = {
    inspect: ['inspect', TENANT, 'orders.create@1', 'key-x'],
    stuck: ['stuck'],
    list: ['list', '--tenant', TENANT],
    search: ['search', 'key-', '--prefix'],
  };

  it.each(Object.entries(commands))('%s prints no raw control character', async (_name, args) => {
    const printed = await run(...args);
    expect(printed.stderr).not.toMatch(RAW);
    expect(printed.stdout).not.toMatch(RAW);
    expect(printed.stdout).toContain('\\u001b]0;pwned\\u0007');
  });

  it('shows the escaped key and reason where stuck prints them', async () => {
    const printed = await run('stuck');
    expect(printed.code).toBe(0);
    expect(printed.stdout).toContain('key-\\u001b[2J\\u009b31m\\u202e');
    // The table writes a carriage return as a space.
    expect(printed.stdout).toContain('the provider \\u001b[1Aall fine\\u007f');
  });

  it.each(['stuck', 'list'])('%s keeps its columns in line around an escaped cell', async (name) => {
    const printed = await run(...(commands[name] ?? []));
    const [header = '', ...rows] = printed.stdout.trimEnd().split('\n');
    expect(rows).toHaveLength(2);
    // Every row's operation and mode start under their titles, whatever the tenant and key before them.
    for (const row of rows) {
      expect(row.indexOf('orders.create@1'), row).toBe(header.indexOf('OPERATION'));
      expect(row.indexOf('leased'), row).toBe(header.indexOf('MODE'));
    }
  });

  it.each(Object.entries(commands))('%s --json prints JSON holding the stored text as it is', async (_name, args) => {
    const printed = await run(...args, '--json');
    expect(printed.stdout).not.toMatch(RAW);
    const text = JSON.stringify(JSON.parse(printed.stdout));
    expect(text).toContain(JSON.stringify(TENANT).slice(1, -1));
  });
});

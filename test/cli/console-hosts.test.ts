import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionForm, postRebound } from '../console/console-http.js';
import { send } from '../support/http.js';
import { insertRecord } from '../retention/records.js';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { consoleUrl, retrysafe, type Running, startRetrysafe } from './run-cli.js';

/**
 * `retrysafe console` answers only for the names it was started for: the
 * loopback names and its own address on its port, and those --allowed-host
 * adds. A page reached under any other name, as a site that points its own
 * name at the console's address (DNS rebinding) reaches it, is refused with
 * 421 before anything is read, and so is its post.
 */
describe('retrysafe console’s host names', () => {
  let db: CliDatabase;
  const consoles: Running[] = [];
  const identity = { tenant: 'tenant-a', operation: 'payments.create@1', key: 'rebound' };

  /** Starts the console with `args`; where it answers, once it says so. */
  async function serve(args: readonly string[]): Promise<string> {
    const running = startRetrysafe(['console', '--port', '0', '--database-url', db.url, ...args]);
    consoles.push(running);
    return consoleUrl(running);
  }

  const operationPath = `/operation?${new URLSearchParams(identity).toString()}`;
  const stateOf = async () =>
    (
      await db.database.query<{ state: string }>('SELECT state FROM retrysafe_operations WHERE key = $1', [
        identity.key,
      ])
    ).rows[0]?.state;

  beforeAll(async () => {
    db = await openCliDatabase();
    await insertRecord(db.database, { ...identity, state: 'unknown', mode: 'leased', reason: 'no answer' });
  });
  afterAll(async () => {
    for (const running of consoles) running.child.kill('SIGTERM');
    await Promise.all(consoles.map((running) => running.exited));
    await db.close();
  });

  it('refuses a rebound name with 421, neither showing the page nor purging the record', async () => {
    const url = await serve(['--allow-actions', '--actor', 'ops@example.com']);
    const rebound = `evil.example:${new URL(url).port}`;
    const page = await send('GET', `${url}${operationPath}`, { headers: { host: rebound } });
    expect(page.status).toBe(421);
    expect(page.bodyBytes.toString()).not.toContain(identity.key);
    expect(page.bodyBytes.toString()).not.toContain('name="csrf"');
    // The console's own form, with its session, posted as the rebound page would post it.
    const form = await actionForm(`${url}${operationPath}`, 'purge', {});
    const purge = await postRebound(form, rebound, {});
    expect(purge.status, purge.bodyBytes.toString()).toBe(421);
    expect(await stateOf()).toBe('unknown');
  });

  it('says in its help which names it answers for and how to add one', async () => {
    const help = await retrysafe(['console', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout.replace(/\s+/g, ' ')).toContain(
      '--allowed-host <host> another host name the console answers for, as "name" (any port) or "name:port"; repeatable. It always answers for localhost, 127.0.0.1, [::1] and --host on its port, and refuses any other name (421)',
    );
  });

  it('answers for the loopback names on its port, and for each --allowed-host', async () => {
    const url = await serve(['--allowed-host', 'ops.internal', '--allowed-host', 'console.example:8443']);
    const port = new URL(url).port;
    const status = async (host: string) => (await send('GET', `${url}${operationPath}`, { headers: { host } })).status;
    for (const host of [
      `127.0.0.1:${port}`,
      `localhost:${port}`,
      `[::1]:${port}`,
      'ops.internal',
      `ops.internal:${port}`,
    ])
      expect(await status(host), host).toBe(200);
    expect(await status('console.example:8443')).toBe(200);
    expect(await status('console.example')).toBe(421);
    expect(await status('localhost:1')).toBe(421);
    expect(await status(`evil.example:${port}`)).toBe(421);
  });
});

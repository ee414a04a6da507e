import { describe, expect, it } from 'vitest';
import type { OperationIdentity } from '../../src/core/identity.js';
import { createProgram } from '../../src/cli/program.js';
import { operatorToolsSource } from '../../src/cli/operator-tools-source.js';
import { operatorConsole } from '../../src/console/console.js';
import { memoryOperatorTools } from './memory-operator-tools.js';

/**
 * The console and the command line's operator commands run over whatever
 * implements the operator seam: here the one held in memory, which knows
 * nothing of PostgreSQL, and no database is reachable.
 */
const operatorAccess = { read: true, act: true, actor: 'ops@example.com' };
const payment = (key: string): OperationIdentity => ({ tenant: 'tenant-a', operation: 'payments.create@1', key });

describe('the console over the operator seam alone', () => {
  const { tools, seed } = memoryOperatorTools();
  const console = operatorConsole({ tools, allowActions: true });
  const get = (path: string, cookie?: string) => {
    const url = new URL(path, 'http://localhost');
    return console(
      {
        method: 'GET',
        path: url.pathname,
        query: url.searchParams,
        base: '',
        header: (name) => (name === 'host' ? 'localhost' : name === 'cookie' ? cookie : undefined),
        form: () => Promise.resolve(new URLSearchParams()),
      },
      operatorAccess,
    );
  };

  it('shows the overview, the unknown operations and one operation', async () => {
    seed.unknown(payment('pay-unknown'));
    seed.deadLetter('orders.created');
    const overview = await get('/');
    expect(overview.status).toBe(200);
    expect((await get('/operations?state=unknown')).body).toContain('pay-unknown');
    const page = await get(`/operation?${new URLSearchParams({ ...payment('pay-unknown') }).toString()}`);
    expect(page.body).toContain('the provider did not answer the charge');
    expect((await get('/dead-letters')).body).toContain('orders.created');
  });

  it('purges a record through a confirmed, signed form, on the version drawn', async () => {
    const identity = payment('pay-purged');
    seed.completed(identity, 201);
    const drawn = await get(`/operation?${new URLSearchParams({ ...identity }).toString()}`);
    const cookie = drawn.headers['set-cookie']?.split(';')[0];
    const token = /name="csrf" value="([^"]+)"/.exec(drawn.body)?.[1];
    expect([cookie, token].every((value) => value !== undefined)).toBe(true);
    const form = new URLSearchParams({
      ...identity,
      csrf: token!,
      reason: 'the customer asked to forget it',
      seen_state: 'completed',
      seen_fencing_token: '1',
      confirmed: 'yes',
    });
    const answer = await console(
      {
        method: 'POST',
        path: '/actions/purge',
        query: new URLSearchParams(),
        base: '',
        header: (name) => (name === 'host' ? 'localhost' : name === 'cookie' ? cookie : undefined),
        form: () => Promise.resolve(form),
      },
      operatorAccess,
    );
    expect(answer.status).toBe(303);
    expect(await tools.operators.operation(identity)).toBeUndefined();
  });
});

describe('the operator commands over the operator seam alone', () => {
  const { tools, seed } = memoryOperatorTools();

  /** Runs `retrysafe <args>` in this process over the seam: what it printed, and its exit code. */
  async function run(...args: string[]): Promise<{ readonly out: string; readonly code: number }> {
    let out = '';
    const write = process.stdout.write.bind(process.stdout);
    const errors = process.stderr.write.bind(process.stderr);
    process.stdout.write = (chunk: string | Uint8Array) => ((out += String(chunk)), true);
    process.stderr.write = (chunk: string | Uint8Array) => ((out += String(chunk)), true);
    const before = process.exitCode;
    process.exitCode = 0;
    try {
      const program = createProgram(
        { writeOut: (text) => (out += text), writeErr: (text) => (out += text) },
        operatorToolsSource(tools),
      );
      await program.parseAsync(['node', 'retrysafe', ...args]);
      return { out, code: Number(process.exitCode ?? 0) };
    } finally {
      process.stdout.write = write;
      process.stderr.write = errors;
      process.exitCode = before;
    }
  }

  it('inspects, lists and resolves an unknown operation, refusing a stale fencing token', async () => {
    const identity = payment('pay-cli');
    seed.unknown(identity);
    const inspected = await run('inspect', identity.tenant, identity.operation, identity.key, '--json');
    expect(JSON.parse(inspected.out)).toMatchObject({ state: 'unknown', fencingToken: 1 });
    expect((await run('stuck', '--json')).out).toContain('pay-cli');
    expect((await run('list', '--state', 'unknown', '--json')).out).toContain('pay-cli');
    const args = [identity.tenant, identity.operation, identity.key, '--state', 'completed', '--status', '201'];
    const stale = await run('resolve', ...args, '--reason', 'found ch_9', '--fencing-token', '7');
    expect(stale.code).toBe(1);
    expect(stale.out).toContain('changed since it was inspected');
    expect((await run('resolve', ...args, '--reason', 'found ch_9', '--actor', 'ops')).code).toBe(0);
    const view = await tools.operators.operation(identity);
    expect([view?.state, view?.status, view?.actions.map((a) => [a.action, a.actor])]).toEqual([
      'completed',
      201,
      [['resolve', 'ops']],
    ]);
  });

  it('purges only with --yes, and requeues a dead letter at the version listed', async () => {
    const identity = payment('pay-cli-purge');
    seed.completed(identity, 201);
    const without = await run('purge', identity.tenant, identity.operation, identity.key, '--reason', 'gdpr');
    expect(without.code).toBe(1);
    expect(await tools.operators.operation(identity)).toBeDefined();
    expect(
      (await run('purge', identity.tenant, identity.operation, identity.key, '--reason', 'gdpr', '--yes')).code,
    ).toBe(0);
    expect(await tools.operators.operation(identity)).toBeUndefined();

    const id = seed.deadLetter('orders.created');
    const listed = JSON.parse((await run('dead-letters', '--json')).out) as {
      items: { id: string; version: string }[];
    };
    const version = listed.items.find((item) => item.id === id)?.version ?? '';
    expect((await run('requeue', id, '--version', version, '--reason', 'broker is back')).code).toBe(0);
    expect((await tools.operators.deadLetters({ limit: 100 })).items.map((item) => item.id)).not.toContain(id);
  });
});

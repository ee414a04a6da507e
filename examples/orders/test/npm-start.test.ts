import { afterEach, describe, expect, it } from 'vitest';
import { groupAlive, type ServiceProcess, startProcess } from '../testing/child.js';
import { type Storage, storages } from '../testing/storage.js';
import { waitFor } from '../../../test/support/wait-for.js';

const [pglite, postgres] = storages;

describe('npm start, stopped as a supervisor or a terminal stops it', () => {
  let store: Storage | undefined;
  let service: ServiceProcess | undefined;
  afterEach(async () => {
    // Whatever the test left running, npm and everything under it.
    if (service !== undefined && groupAlive(service.pid)) process.kill(-service.pid, 'SIGKILL');
    service = undefined;
    await store?.dispose();
    store = undefined;
  });

  /** Starts `npm start` on `storage`, sends `signal` as `to` says, and checks the whole tree stopped cleanly. */
  async function stopsCleanly(
    storage: (typeof storages)[number] | undefined,
    signal: NodeJS.Signals,
    to: 'npm' | 'group',
  ): Promise<void> {
    if (storage === undefined) throw new Error('no such storage');
    store = await storage.create();
    service = await startProcess(store.env, 120_000, { launch: 'npm' });
    expect(service.output()).toContain(`orders service listening on ${service.url}`);

    const pid = service.pid;
    process.kill(to === 'group' ? -pid : pid, signal);
    expect(await service.exited, service.output()).toBe(0);
    await waitFor(() => Promise.resolve(!groupAlive(pid)), { limitMs: 30_000 });
    const lines = service.output().trimEnd().split('\n');
    expect(lines).toContain(`orders: ${signal}, stopping`);
    expect(lines.at(-1), lines.slice(-5).join('\n')).toBe('orders: stopped');
    await expect(fetch(`${service.url}/healthz`)).rejects.toThrow();
  }

  it('stops the whole process tree on a SIGTERM sent to npm alone, and logs a final line', { timeout: 180_000 }, () =>
    stopsCleanly(pglite, 'SIGTERM', 'npm'),
  );

  // A terminal's Ctrl-C sends SIGINT to every process of the foreground group: npm, which passes it on, and the
  // service, which so receives it twice.
  it(
    'stops cleanly on Ctrl-C on PostgreSQL: SIGINT to the whole process group, exit 0 and a final line',
    { timeout: 180_000 },
    () => stopsCleanly(postgres, 'SIGINT', 'group'),
  );
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../../test/retention/wait-for.js';
import { groupAlive, type ServiceProcess, startProcess } from '../testing/child.js';
import { type Storage, storages } from '../testing/storage.js';

const pglite = storages[0];

describe('npm start, stopped as a supervisor stops it', () => {
  let store: Storage;
  let service: ServiceProcess | undefined;
  beforeAll(async () => {
    if (pglite === undefined) throw new Error('no PGlite storage');
    store = await pglite.create();
  });
  afterAll(async () => {
    // Whatever the test left running, npm and everything under it.
    if (service !== undefined && groupAlive(service.pid)) process.kill(-service.pid, 'SIGKILL');
    await store.dispose();
  });

  it(
    'stops the whole process tree on a SIGTERM sent to npm alone, and logs a final line',
    { timeout: 180_000 },
    async () => {
      service = await startProcess(store.env, 120_000, { launch: 'npm' });
      expect(service.output()).toContain(`orders service listening on ${service.url}`);

      process.kill(service.pid, 'SIGTERM');
      expect(await service.exited).toBe(0);
      const pid = service.pid;
      await waitFor(() => Promise.resolve(!groupAlive(pid)), 30_000);
      const lines = service.output().trimEnd().split('\n');
      expect(lines).toContain('orders: SIGTERM, stopping');
      expect(lines.at(-1), lines.slice(-5).join('\n')).toBe('orders: stopped');
      await expect(fetch(`${service.url}/healthz`)).rejects.toThrow();
    },
  );
});

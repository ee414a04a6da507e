import { cp, mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { schemaSql } from '../../src/postgres/schema.js';
import { expectOneLineError, retrysafe, root } from './run-cli.js';

// pg is an optional peer: a project on postgres.js or PGlite has none. The
// command line is run from a copy of the package whose node_modules holds its
// dependencies only, outside the repository, so nothing up the tree resolves pg.
describe('the command line without the optional peer pg', () => {
  let project: string;

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'retrysafe-without-pg-'));
    await cp(join(root, 'src'), join(project, 'src'), { recursive: true });
    await cp(join(root, 'package.json'), join(project, 'package.json'));
    await mkdir(join(project, 'node_modules'));
    for (const dependency of ['commander', 'structured-headers']) {
      await symlink(join(root, 'node_modules', dependency), join(project, 'node_modules', dependency));
    }
  });
  afterAll(() => rm(project, { recursive: true, force: true }));

  it('prints the schema, which needs no database', async () => {
    const run = await retrysafe(['schema'], {}, project);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(schemaSql(0));
  });

  it('fails a command that connects in one line that names the missing package', async () => {
    const run = await retrysafe(['stuck', '--database-url', 'postgres://postgres@127.0.0.1:5432/test'], {}, project);
    expect(run.code).toBe(1);
    expect(expectOneLineError(run)).toBe(
      'retrysafe stuck: this command connects with node-postgres, an optional peer that is not installed: run "npm install pg".',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { expectOneLineError, retrysafe } from './run-cli.js';

const EXPECTED = 'expected one like postgres://user:password@host:5432/database.';

describe('a database URL that is not a PostgreSQL URL', () => {
  it.each([
    ['not a URL at all', 'notaurl', 'not a URL'],
    ['an http:// URL', 'http://db.example.com:5432/orders', 'scheme http:'],
  ])('is a usage error in one line saying what a PostgreSQL URL looks like: %s', async (_name, url, got) => {
    const [flag, env] = await Promise.all([
      retrysafe(['stuck', '--database-url', url]),
      retrysafe(['migrate'], { DATABASE_URL: url }),
    ]);
    expect(flag.code).toBe(2);
    expect(expectOneLineError(flag)).toBe(`error: --database-url is not a PostgreSQL URL (${got}); ${EXPECTED}`);
    expect(env.code).toBe(2);
    expect(expectOneLineError(env)).toBe(`error: DATABASE_URL is not a PostgreSQL URL (${got}); ${EXPECTED}`);
  });

  it('never prints the password of a URL it refuses', async () => {
    const run = await retrysafe([
      'inspect',
      't',
      'o@1',
      'k',
      '--database-url',
      'https://admin:hunter2@db.example.com/orders',
    ]);
    expect(run.code).toBe(2);
    expect(expectOneLineError(run)).not.toContain('hunter2');
  });
});

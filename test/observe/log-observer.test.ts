import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { identityHash } from '../../src/core/identity.js';
import { RetrysafeError } from '../../src/core/errors.js';
import { logObserver } from '../../src/observe/log-observer.js';
import { type Engine, engines } from '../support/engines.js';
import { NOTES, PAYMENTS, runScenarios } from './scenarios.js';

const SECRET = 'log-identity-secret';

interface Line {
  readonly level: number;
  readonly msg: string;
  readonly event: string;
  readonly op?: string;
  readonly operation?: string;
  readonly [field: string]: unknown;
}

describe.each(engines)('safe logs on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());

  it('writes a structured line for every main path, with no raw key, tenant or body value in any line', async () => {
    const raw: string[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void raw.push(line) });
    const secrets = await runScenarios(engine, [logObserver(logger, { identitySecret: SECRET })]);

    const forbidden = [...secrets.keys, ...secrets.tenants, ...secrets.bodyValues];
    const leaks = raw.flatMap((line) =>
      forbidden.filter((secret) => line.includes(secret)).map((secret) => `${secret} in ${line}`),
    );
    expect(leaks).toEqual([]);

    const lines = raw.map((line) => JSON.parse(line) as Line);
    const events = new Set(lines.map((line) => line.event));
    // PGlite runs one transaction at a time: a duplicate waits before it reaches the database, never on a lock.
    const lockWait = engine.concurrent ? ['lock-wait'] : [];
    for (const event of [
      'claimed',
      'finished',
      'replayed',
      'fingerprint-mismatch',
      'conflict',
      ...lockWait,
      'store-error',
      'fenced',
      'taken-over',
      'unknown',
      'problem',
    ]) {
      expect(events, event).toContain(event);
    }
    // The operation appears by name and by keyed hash only.
    const first = lines.find((line) => line.event === 'claimed' && line.operation === NOTES);
    expect(first?.op).toBe(identityHash(secrets.first, SECRET));
    expect(lines.find((line) => line.event === 'taken-over')).toMatchObject({
      operation: PAYMENTS,
      by: 'recovery',
      attempt: 2,
    });
    expect(lines.find((line) => line.event === 'store-error')).toMatchObject({
      level: 50,
      operation: NOTES,
      errorCode: 'store-unavailable',
      causeCode: 'ECONNREFUSED',
    });
    expect(lines.find((line) => line.event === 'unknown')).toMatchObject({ level: 50, operation: PAYMENTS });
    expect(lines.find((line) => line.event === 'fenced')).toMatchObject({ level: 40, operation: PAYMENTS, attempt: 1 });
    // A problem that has its own event is not logged twice.
    expect(lines.filter((line) => line.event === 'problem').map((line) => line.code)).not.toContain(
      'fingerprint-mismatch',
    );
  });

  it('refuses an empty identity secret', () => {
    expect(() => logObserver(pino({ enabled: false }), { identitySecret: '' })).toThrow(RetrysafeError);
  });
});

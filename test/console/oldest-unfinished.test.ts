import { describe, expect, it } from 'vitest';
import { operatorStore } from '../../src/postgres/postgres-operator-store.js';
import { insertRecord, type RecordSpec } from '../retention/records.js';
import { engines } from '../support/engines.js';
import { drawPage, OPERATOR, useConsole } from './console-http.js';

/**
 * The overview's "oldest unfinished" card: the oldest operation that has no
 * outcome yet, whatever its mode, in progress or unknown; never a finished
 * record, a tombstone, or one an operator resolved.
 */
const HOUR = 3600;

describe.each(engines)('the oldest unfinished operation on $name', (factory) => {
  const ref = useConsole(factory);

  const insert = async (...specs: RecordSpec[]) => {
    for (const spec of specs) await insertRecord(ref.engine.database, spec);
  };
  /** Finished long ago: never unfinished, however old. */
  const finished = () =>
    insert(
      { key: 'done', state: 'completed', createdAgo: 10 * 24 * HOUR },
      { key: 'refused', state: 'failed', createdAgo: 9 * 24 * HOUR },
      { key: 'pruned', state: 'tombstone', createdAgo: 20 * 24 * HOUR },
      // Resolved by an operator: it keeps its reason, as an unknown outcome does.
      { key: 'resolved', state: 'completed', mode: 'leased', reason: 'found by hand', createdAgo: 8 * 24 * HOUR },
    );
  /** The card as the overview shows it. */
  const card = async () =>
    /<b>([^<]*)<\/b>oldest unfinished<\/div>/.exec(await drawPage(`${ref.base}/`, OPERATOR))?.[1];
  const oldest = () => operatorStore(ref.engine.database).oldestUnfinished();

  it('is none when every operation is finished', async () => {
    await finished();
    expect(await oldest()).toBeUndefined();
    expect(await card()).toBe('—');
  });

  it('counts an unknown outcome, leased or transparent, older than any work in progress', async () => {
    await finished();
    await insert(
      { key: 'lost-charge', state: 'unknown', mode: 'leased', createdAgo: 3 * HOUR },
      { key: 'lost-import', state: 'unknown', mode: 'transparent', createdAgo: 2 * HOUR },
      { key: 'running', state: 'in_progress', mode: 'leased', leaseExpiresIn: 60, createdAgo: HOUR },
    );
    expect(await oldest()).toBeGreaterThanOrEqual(3 * HOUR);
    expect(await oldest()).toBeLessThan(3 * HOUR + 60);
    expect(await card()).toBe('3h0m');
  });

  it('counts unknown outcomes when nothing is in progress', async () => {
    await finished();
    await insert({ key: 'lost-import', state: 'unknown', mode: 'transparent', createdAgo: 2 * 24 * HOUR });
    expect(await card()).toBe('2d0h');
  });

  it('counts work in progress of every mode that holds a lease, expired or not', async () => {
    await finished();
    await insert(
      { key: 'import', state: 'in_progress', mode: 'transparent', leaseExpiresIn: 60, createdAgo: 5 * HOUR },
      { key: 'crashed', state: 'in_progress', mode: 'leased', leaseExpiresIn: -60, createdAgo: 4 * HOUR },
      { key: 'lost', state: 'unknown', mode: 'leased', createdAgo: HOUR },
    );
    expect(await card()).toBe('5h0m');
    await ref.engine.database.query(`DELETE FROM retrysafe_operations WHERE key = 'import'`);
    expect(await card()).toBe('4h0m');
  });
});

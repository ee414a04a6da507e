import pg from 'pg';
import { waitFor } from '../../support/wait-for.js';

/**
 * Holds processes at the start line so that they really race: each waits in
 * `pg_advisory_lock_shared(key)` (see the programs' START_GATE) until `open`.
 */
export interface StartGate {
  readonly key: string;
  /** Waits until `count` processes wait at the gate, then lets them all go at once. */
  open(count: number): Promise<void>;
}

export async function closedStartGate(url: string): Promise<StartGate> {
  const key = String(Math.floor(Math.random() * 1_000_000_000));
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await client.query('SELECT pg_advisory_lock($1)', [key]);
  return {
    key,
    async open(count) {
      const waiting = async () =>
        (
          await client.query<{ n: number }>(
            "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND objid = $1::bigint",
            [key],
          )
        ).rows[0]?.n ?? 0;
      try {
        await waitFor(async () => (await waiting()) >= count, { what: `${count} processes wait at the start gate` });
        await client.query('SELECT pg_advisory_unlock($1)', [key]);
      } finally {
        await client.end();
      }
    },
  };
}

import pg from 'pg';

/** A node-postgres pool that counts every statement its clients send. */
export interface CountedPool {
  readonly pool: pg.Pool;
  /** Statements sent so far. node-postgres sends one statement per round trip, so this is the round-trip count. */
  readonly roundTrips: () => number;
}

/**
 * With `unnamed`, retrysafe's named statements are sent without their name,
 * as they were before retrysafe named them: parsed and planned on every
 * execution. The bench compares both.
 */
export function countedPool(connectionString: string, max: number, unnamed = false, pipeline = false): CountedPool {
  // `pipeline` (node-postgres 8.23) is not in @types/pg: passed through a variable.
  const config = { connectionString, max, pipeline };
  const pool = new pg.Pool(config);
  let trips = 0;
  // `pool.query` borrows a client and calls its `query`, so wrapping each client counts both paths.
  pool.on('connect', (client) => {
    const send = client.query.bind(client);
    const counted = (...args: unknown[]): unknown => {
      trips += 1;
      const [statement, ...rest] = args;
      const named = unnamed && typeof statement === 'object' && statement !== null && 'name' in statement && 'text' in statement;
      return Reflect.apply(send, client, named ? [statement.text, ...rest] : args) as unknown;
    };
    client.query = counted as unknown as typeof client.query;
  });
  return { pool, roundTrips: () => trips };
}

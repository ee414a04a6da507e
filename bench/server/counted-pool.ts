import pg from 'pg';

/** A node-postgres pool that counts its clients' round trips. */
export interface CountedPool {
  readonly pool: pg.Pool;
  /**
   * Round trips so far: on a pool in pipeline mode a statement sent while none is in flight on its client starts
   * one and one sent behind another shares it; on a plain pool, which sends a statement once the one before it is
   * answered, each statement is one.
   */
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
    let inFlight = 0;
    const counted = (...args: unknown[]): unknown => {
      if (!pipeline || inFlight === 0) trips += 1;
      inFlight += 1;
      const [statement, ...rest] = args;
      const named =
        unnamed && typeof statement === 'object' && statement !== null && 'name' in statement && 'text' in statement;
      const sent = named ? [statement.text, ...rest] : args;
      // `pool.query` passes a callback; everything else awaits the promise.
      const callback = sent.at(-1);
      if (typeof callback === 'function') {
        sent[sent.length - 1] = (...results: unknown[]) => {
          inFlight -= 1;
          Reflect.apply(callback, undefined, results);
        };
        return Reflect.apply(send, client, sent) as unknown;
      }
      const answer = Reflect.apply(send, client, sent) as Promise<unknown>;
      void answer.then(
        () => (inFlight -= 1),
        () => (inFlight -= 1),
      );
      return answer;
    };
    client.query = counted as unknown as typeof client.query;
  });
  return { pool, roundTrips: () => trips };
}

import { setTimeout as sleep } from 'node:timers/promises';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import { prepareDatabase } from './schema.js';

/** Whether the service's schema is in place; until it is, requests other than /healthz get 503. */
export interface SchemaReadiness {
  readonly ready: boolean;
}

/** For a database the caller has already prepared (the tests). */
export const schemaReady: SchemaReadiness = { ready: true };

const FIRST_WAIT_MS = 250;
const LONGEST_WAIT_MS = 5_000;

/**
 * Prepares the schema, trying again with a growing pause while the database
 * does not answer, so the service can start during an outage and serve as
 * soon as the database is back.
 */
export class SchemaPreparation implements SchemaReadiness {
  ready = false;

  constructor(private readonly database: SqlDatabase<SqlClient>) {}

  /** Resolves true once prepared, false when `signal` aborted first. */
  async untilPrepared(options: {
    readonly signal: AbortSignal;
    readonly onError: (error: unknown) => void;
  }): Promise<boolean> {
    for (let waitMs = FIRST_WAIT_MS; !options.signal.aborted; waitMs = Math.min(waitMs * 2, LONGEST_WAIT_MS)) {
      try {
        await prepareDatabase(this.database);
        this.ready = true;
        return true;
      } catch (error) {
        options.onError(error);
        await sleep(waitMs, undefined, { signal: options.signal }).catch(() => undefined);
      }
    }
    return false;
  }
}

/**
 * What the console charts, each a count per hour and operation; `failed`
 * counts attempts whose handler threw or answered a status the policy does
 * not keep, those released for a later attempt included.
 */
export type ActivityKind = 'new' | 'replay' | 'mismatch' | 'conflict' | 'unknown' | 'failed';

/** Every kind, in the order the console draws them. */
export const ACTIVITY_KINDS: readonly ActivityKind[] = ['new', 'replay', 'mismatch', 'conflict', 'unknown', 'failed'];

/** How many times one kind of thing happened to one operation within one hour. */
export interface ActivityCount {
  /** The start of the hour, in UTC. */
  readonly hour: Date;
  readonly operation: string;
  readonly kind: ActivityKind;
  readonly n: number;
}

/**
 * The hourly activity counts, apart from the request path: processes add what
 * they counted in memory, the console reads the last hours, and the sweeper
 * deletes hours past their retention. Each call is one statement.
 */
export interface ActivityStore {
  /** Adds every count to its bucket, in one statement; a bucket of several processes is their sum. */
  addActivity(counts: readonly ActivityCount[]): Promise<void>;
  /** The buckets of the last `hours` hours, the current one included, oldest first, each operation apart. */
  activity(hours: number): Promise<readonly ActivityCount[]>;
  /** Deletes up to `limit` buckets of hours that ended more than `olderThanSeconds` ago; resolves to how many. */
  pruneActivity(olderThanSeconds: number, limit: number): Promise<number>;
}

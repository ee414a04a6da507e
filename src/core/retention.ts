/** How long a completed operation keeps its response, then its tombstone. */
export interface Retention {
  /** Seconds the response body is kept and replayed. Default 24 hours. */
  readonly responseSeconds: number;
  /** Seconds the tombstone (identity, fingerprint, status, resource) is kept. Default 30 days. */
  readonly tombstoneSeconds: number;
}

export const defaultRetention: Retention = { responseSeconds: 24 * 3600, tombstoneSeconds: 30 * 24 * 3600 };

/** Which Idempotency-Key each request of a load carries. */
export type KeyPlan =
  /** A new key on every request. */
  | 'fresh'
  /** The keys created beforehand, round-robin: every request is a replay. */
  | 'replay'
  /** A few keys sent by many clients at once: concurrent duplicates. */
  | 'storm';

/** The keys of an autocannon load; storms send theirs from `storm.ts`. */
export function keyStream(plan: Exclude<KeyPlan, 'storm'>, prefix: string, replayKeys: number): () => string {
  let next = 0;
  const modulo = plan === 'replay' ? replayKeys : Number.POSITIVE_INFINITY;
  return () => `${prefix}${next++ % modulo}`;
}

/**
 * The points on the request path where a crash test kills the process. A
 * point is armed by naming it in `RETRYSAFE_CRASH_AT`; unarmed (always, in
 * production) it does nothing.
 */
export type CrashPoint =
  | 'before-claim'
  | 'after-claim'
  | 'before-commit'
  | 'after-commit'
  /** A step recorded its start and has not yet called downstream. */
  | 'before-step-call'
  | 'after-step-call'
  | 'after-checkpoint'
  /** A local step's writes are done and its transaction has not committed. */
  | 'before-local-commit'
  /** A local step's writes and recovery point committed. */
  | 'after-local-commit'
  | 'before-complete'
  | 'after-complete'
  | 'while-serialising'
  /** The relay published a message and has not yet marked it delivered. */
  | 'relay-after-publish'
  /** A consumer committed its inbox record and writes, and has not yet acknowledged the message. */
  | 'consumer-after-commit';

const armed = process.env.RETRYSAFE_CRASH_AT;

/** Kills this process with SIGKILL, as a power cut would, when `point` is the armed one. */
export function crashPoint(point: CrashPoint): void {
  if (armed === point) process.kill(process.pid, 'SIGKILL');
}

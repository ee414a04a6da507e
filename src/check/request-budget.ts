import { setMaxListeners } from 'node:events';

/**
 * Bounds a check in number of requests and in time. Every request spends one
 * unit; once the budget or the deadline is used up, nothing more is sent.
 */
export class RequestBudget {
  /** Aborts in-flight requests when the deadline passes. */
  readonly signal: AbortSignal;
  private spent = 0;

  constructor(
    private readonly maxRequests: number,
    deadlineMs: number,
  ) {
    this.signal = AbortSignal.timeout(deadlineMs);
    // Every in-flight request listens; a concurrency burst is not a leak.
    setMaxListeners(0, this.signal);
  }

  /** Spends one request, or says why none is left. */
  spend(): 'ok' | 'deadline' | 'budget' {
    if (this.signal.aborted) return 'deadline';
    if (this.spent >= this.maxRequests) return 'budget';
    this.spent += 1;
    return 'ok';
  }

  get used(): number {
    return this.spent;
  }
}

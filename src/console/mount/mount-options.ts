import type { ConsoleAccess, ConsoleOptions } from '../console.js';

/** What every mount takes: the console's options and the application's own decision on each request. */
export type MountOptions<Tx, Request> = ConsoleOptions<Tx> & {
  /**
   * Decides who may read and who may act, from the framework's request (its
   * session, its user). Required: the console refuses everyone it does not
   * allow. Throwing answers 500 and shows nothing.
   */
  authorize(this: void, request: Request): ConsoleAccess | Promise<ConsoleAccess>;
};

/** The most a form may send: a reason and a resolved body fit well within it. */
export const FORM_LIMIT_BYTES = 64 * 1024;

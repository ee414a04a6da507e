import type { Reply } from './answer/reply.js';
import type { Retention } from './retention.js';

/** What completing an operation writes into its record: its final state, the stored part of its reply, their retention. */
export interface Completion {
  readonly state: 'completed' | 'failed';
  /** The stored part of the reply: status, allowed headers and body bytes. */
  readonly reply: Reply;
  readonly retention: Retention;
  /** The body was too large to keep; `reply.body` is then empty. */
  readonly omitted?: boolean;
}

import { count, type OptionRules, STORED_MAX_SECONDS, wholeSeconds } from '../core/option-rules.js';
import type { OperationQuery } from './operator-store.js';

/** A page holds 1 to 1000 rows; an age is whole seconds, as SQL compares it with a claim time. */
export const operationQueryRules = {
  olderThanSeconds: wholeSeconds(0, STORED_MAX_SECONDS),
  limit: count(1, 1000),
} as const satisfies OptionRules<OperationQuery>;

/** A record's fencing token, as an operator read it: the bigint column as far as a number holds it exactly. */
export const fencingTokenRule = count(0, Number.MAX_SAFE_INTEGER);

/** Whether `version` is one the operator store gives a parked message: a time to the microsecond, in UTC. */
export function isParkedVersion(version: string): boolean {
  return /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/.test(version);
}

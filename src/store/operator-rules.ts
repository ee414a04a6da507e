import { count, type OptionRules, STORED_MAX_SECONDS, wholeSeconds } from '../core/option-rules.js';
import type { OperationQuery } from './operator-store.js';

/** A page holds 1 to 1000 rows; an age is whole seconds, as SQL compares it with a claim time. */
export const operationQueryRules = {
  olderThanSeconds: wholeSeconds(0, STORED_MAX_SECONDS),
  limit: count(1, 1000),
} as const satisfies OptionRules<OperationQuery>;

/** A record's fencing token, as an operator read it: the bigint column as far as a number holds it exactly. */
export const fencingTokenRule = count(0, Number.MAX_SAFE_INTEGER);

import type { Idempotency } from '../../modes/idempotency.js';
import type { NestHttpRequest } from './nest-request.js';

/** What `RetrysafeModule.forRoot` takes: the configuration, and how every idempotent route finds its caller. */
export interface RetrysafeModuleOptions<Tx = unknown> {
  /** From `idempotency({ store, … })`. */
  readonly idempotency: Idempotency<Tx>;
  /** The authenticated caller's tenant, or undefined to answer 401. Runs on every attempt. A route may set its own. */
  tenant(this: void, request: NestHttpRequest): string | undefined | Promise<string | undefined>;
  /** The authenticated user within the tenant, when keys are scoped per user; undefined answers 401. A route may set its own. */
  principal?(this: void, request: NestHttpRequest, tenant: string): string | undefined | Promise<string | undefined>;
  /** Runs on every attempt, replays included; false answers 403. A route may set its own. */
  authorize?(this: void, request: NestHttpRequest, tenant: string): boolean | Promise<boolean>;
}

/** The injection token of the module's options. */
export const RETRYSAFE_OPTIONS = Symbol('retrysafe options');

import { Reflector } from '@nestjs/core';
import type { RouteDefinition, TransparentRoute } from '../../core/route.js';
import type { LeasedOperation } from '../../modes/leased-route.js';
import type { NestHttpRequest } from './nest-request.js';
import type { RetrysafeModuleOptions } from './retrysafe-options.js';

/** What a route may set for itself; `tenant` and `authorize` default to the module's. */
export type RouteOptions = Omit<RouteDefinition<NestHttpRequest, unknown>, 'operation' | 'tenant'> &
  Partial<Pick<RouteDefinition<NestHttpRequest, unknown>, 'tenant'>>;

/**
 * How a route is made idempotent.
 * - `atomic`: the method runs inside the transaction that holds the operation
 *   record; it gets that transaction through `@Tx()`.
 * - `transparent`: the method runs as usual, without steps; its answer is
 *   stored before it is sent, and a retry never runs it again: a failure is
 *   stored or kept `unknown`, as `onFailure` says.
 * - `leased`: the operation's `handler` runs with steps (the same object goes
 *   to the recovery worker); the method itself is not called.
 */
export type IdempotentRouteOptions =
  | (RouteOptions & { readonly mode: 'atomic'; readonly operation: string })
  | (RouteOptions &
      Pick<TransparentRoute<NestHttpRequest, unknown>, 'onFailure'> & {
        readonly mode: 'transparent';
        readonly operation: string;
      })
  | (RouteOptions & LeasedOperation<unknown, unknown> & { readonly mode: 'leased' });

/** Where `@Idempotent` keeps a route's options for the interceptor. */
export const idempotentRoute = Reflector.createDecorator<IdempotentRouteOptions>();

/** A route's definition: its own options over the module's `tenant`, `principal` and `authorize`. */
export function withModuleOptions(
  options: RetrysafeModuleOptions,
  route: IdempotentRouteOptions,
): TransparentRoute<NestHttpRequest, unknown> {
  return { tenant: options.tenant, principal: options.principal, authorize: options.authorize, ...route };
}

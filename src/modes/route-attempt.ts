import { notify, type Observer, type RetrysafeEvent } from '../core/events.js';
import type { Idempotency } from './idempotency.js';
import { problemCatalogue } from '../core/answer/problems.js';
import type { OperationMode } from '../core/record.js';
import type { RouteDefinition } from '../core/route.js';
import { resolveRetention, type RouteSettings } from '../core/route-settings.js';
import { type AttemptEnding, traceAttempt } from './traced-attempt.js';
import { extend } from '../core/extend.js';
import type { OperationIdentity } from '../core/identity.js';

/** The parts of a route that shape its attempts. */
type AttemptRoute<Req> = Pick<RouteDefinition<Req, unknown>, 'operation' | 'onReplay' | 'onConflict' | 'onRefusal'> &
  RouteSettings;

/**
 * Runs one attempt of `route` with the configuration as the route sees it:
 * its own settings, its hooks called from the events the attempt emits, and
 * its span. Every mode starts its attempts here.
 */
export function routeAttempt<Req, C extends Idempotency<unknown, unknown>, T>(
  config: C,
  route: AttemptRoute<Req>,
  request: Req,
  mode: OperationMode,
  work: (config: C, ending: AttemptEnding) => Promise<T>,
): Promise<T> {
  const own = forRoute(config, route);
  const withHooks = hasHooks(route)
    ? extend(own, { emit: (event: RetrysafeEvent) => notify([own.emit, routeHooks(route, request)], event) })
    : own;
  return traceAttempt(withHooks, route.operation, mode, work);
}

function hasHooks<Req>(route: AttemptRoute<Req>): boolean {
  return route.onReplay !== undefined || route.onConflict !== undefined || route.onRefusal !== undefined;
}

/** The route's hooks as one observer: a throwing hook is kept from the request like a throwing observer. */
function routeHooks<Req>(route: AttemptRoute<Req>, request: Req): Observer {
  const { operation } = route;
  return function callHooks(event) {
    if (event.type === 'replayed') route.onReplay?.({ request, operation, identity: event.identity });
    if (event.type !== 'problem') return;
    const { code } = event;
    const refusal = { request, operation, identity: event.identity, code, status: problemCatalogue[code].status };
    if (code === 'operation-in-progress' || code === 'fingerprint-mismatch')
      notify([() => route.onConflict?.(refusal)], event);
    route.onRefusal?.(refusal);
  };
}

/** The configuration as one route sees it. */
export function forRoute<C extends Idempotency<unknown, unknown>>(config: C, route: RouteSettings): C {
  if (route.describedBy === undefined && route.retention === undefined) return config;
  return extend(config, {
    describedBy: route.describedBy ?? config.describedBy,
    retentionFor: (identity: OperationIdentity) =>
      resolveRetention(route.retention, identity, config.retentionFor(identity)),
  });
}

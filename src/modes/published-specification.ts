import type { Reply } from '../core/answer/reply.js';
import { RetrysafeError } from '../core/errors.js';
import { extend } from '../core/extend.js';
import type { OperationMode } from '../core/record.js';
import { defineRoute, type RouteDefinition } from '../core/route.js';
import { checkRetention } from '../core/route-settings.js';
import { openApiDocument } from '../core/specification/openapi.js';
import { specificationPage } from '../html/specification-page.js';
import type { RouteSpecification } from '../core/specification/route-specification.js';
import type { Idempotency } from './idempotency.js';

/** The routes defined with one configuration, and where their specification is served. */
export interface PublishedSpecification {
  /** Where the page is served (`specificationPath`), its OpenAPI document at `<path>/openapi.json`; undefined when not served. */
  readonly path: string | undefined;
  /** Every route defined with this configuration, by operation, in the order defined. */
  routes(): readonly RouteSpecification[];
}

/** The registry behind `PublishedSpecification`: routes add themselves as they are defined. */
export interface SpecificationRegistry extends PublishedSpecification {
  /** Whether the configuration's retention is a function, decided per operation. */
  readonly retentionVaries: boolean;
  add(route: RouteSpecification): void;
}

export function specificationRegistry(path: string | undefined, retentionVaries: boolean): SpecificationRegistry {
  if (path !== undefined && !/^\/[\x21-\x7e]*$/.test(path.replace(/[<>?#]/g, ' ')))
    throw new RetrysafeError(
      'misuse',
      `specificationPath must be a path from the root, without spaces, angle brackets, query or fragment, got ${JSON.stringify(path)}.`,
    );
  const routes = new Map<string, RouteSpecification>();
  return {
    path: path?.replace(/(.)\/$/, '$1'),
    retentionVaries,
    routes: () => [...routes.values()],
    add: (route) => void routes.set(route.operation, route),
  };
}

/** What a route's specification is made of: its definition, whatever its mode. */
type PublishedRoute = Pick<
  RouteDefinition<never, never>,
  'operation' | 'keyRequired' | 'retention' | 'describedBy' | 'key' | 'fingerprint' | 'principal'
> & { readonly lockTimeoutMs?: number };

/**
 * Checks a route once, when it is defined (`defineRoute`), and adds it to the
 * configuration's published specification, from its own settings over the
 * configuration's.
 */
export function publishRoute<R extends PublishedRoute>(
  config: Idempotency<unknown, unknown>,
  route: R,
  mode: OperationMode,
): R {
  defineRoute(route);
  const { retention } = route;
  const perOperation = config.specification.retentionVaries || typeof retention === 'function';
  config.specification.add({
    operation: route.operation,
    mode,
    keyRequired: route.keyRequired ?? true,
    keySource: route.key === undefined ? 'header' : 'route',
    keyLimits: config.keyLimits,
    retention: extend(
      typeof retention === 'object' ? checkRetention(extend(config.retention, retention)) : config.retention,
      { perOperation },
    ),
    fingerprint: route.fingerprint === undefined ? 'default' : 'route',
    perPrincipal: route.principal !== undefined,
    ...(mode === 'atomic' ? { lockTimeoutMs: route.lockTimeoutMs ?? config.lockTimeoutMs } : {}),
    problemBase: config.problemBase,
  });
  return route;
}

/**
 * The answer to a `GET` or `HEAD` of the specification's page or of its
 * OpenAPI document; undefined for any other request. Throws when the
 * configuration names no `specificationPath`.
 */
export function specificationReply(
  config: Idempotency<unknown, unknown>,
  method: string,
  pathname: string,
): Reply | undefined {
  const { page, json } = specificationPaths(config);
  if (method !== 'GET' && method !== 'HEAD') return undefined;
  const routes = config.specification.routes();
  if (pathname === json) {
    const document = openApiDocument(routes, { describedBy: config.describedBy });
    return reply('application/json', JSON.stringify(document, null, 2));
  }
  if (pathname !== page) return undefined;
  return reply('text/html; charset=utf-8', specificationPage(routes, { openApiUrl: json }));
}

/** Where the page and the OpenAPI document are served; throws when the configuration names no `specificationPath`. */
export function specificationPaths(config: Idempotency<unknown, unknown>): {
  readonly page: string;
  readonly json: string;
} {
  const { path } = config.specification;
  if (path === undefined)
    throw new RetrysafeError(
      'misuse',
      'Serving the idempotency specification needs specificationPath in the idempotency() options.',
    );
  return { page: path, json: `${path === '/' ? '' : path}/openapi.json` };
}

function reply(contentType: string, text: string): Reply {
  return { status: 200, headers: { 'content-type': contentType }, body: Buffer.from(text, 'utf8') };
}

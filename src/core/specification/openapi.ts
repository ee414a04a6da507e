import { type ProblemCode, problemCatalogue } from '../answer/problems.js';
import { type RouteSpecification, refusalsOf } from './route-specification.js';

/** A JSON value of an OpenAPI document. */
export type OpenApiValue = string | number | boolean | null | readonly OpenApiValue[] | OpenApiObject;
export interface OpenApiObject {
  readonly [member: string]: OpenApiValue;
}

/** The statuses the draft names for a refused key, and so the ones linked to the specification. */
const LINKED = new Set([400, 409, 422]);

/**
 * One route as an OpenAPI 3.1 Path Item: its `post` operation with the
 * `Idempotency-Key` header parameter, every problem the route answers on its
 * own behalf (by status, each code an example with its `applied` and `retry`
 * guidance), and `x-idempotency`, the route's settings, expiry included.
 * Self-contained, so it can be merged into an application's own document
 * under the route's path (`$ref` to it, or copy it).
 */
export function openApiPathItem(route: RouteSpecification, describedBy?: string): OpenApiObject {
  const parameters = route.keySource === 'header' ? [keyParameter(route)] : [];
  return {
    summary: `${route.operation} (idempotent with a key)`,
    post: {
      operationId: componentName(route),
      parameters,
      responses: refusalResponses(route, describedBy),
      'x-idempotency': idempotencyExtension(route),
    },
  };
}

/** Every route's path item under `components.pathItems`, by `componentName`, in one OpenAPI 3.1 document. */
export function openApiDocument(
  routes: readonly RouteSpecification[],
  options: { readonly title?: string; readonly describedBy?: string } = {},
): OpenApiObject {
  return {
    openapi: '3.1.0',
    info: {
      title: options.title ?? 'Idempotency specification',
      version: '1',
      description:
        'Idempotency-Key behaviour of each operation: refusals, their guidance, and how long keys are kept (x-idempotency).',
    },
    paths: {},
    components: {
      pathItems: Object.fromEntries(
        routes.map((route) => [componentName(route), openApiPathItem(route, options.describedBy)]),
      ),
    },
  };
}

/** The operation as an OpenAPI component name, which allows no `@`: `orders.create@1` is `orders.create.v1`. */
function componentName(route: RouteSpecification): string {
  return route.operation.replace('@', '.v').replace(/[^A-Za-z0-9._-]/g, '_');
}

function keyParameter(route: RouteSpecification): OpenApiObject {
  const { minBytes, maxBytes } = route.keyLimits;
  return {
    name: 'Idempotency-Key',
    in: 'header',
    required: route.keyRequired,
    description: `One per operation, the same on every retry: ${minBytes} to ${maxBytes} bytes of visible ASCII, bare (8e03978e-40d5) or as a structured-field string ("8e03978e-40d5"), the quotes not counted. Sent once.${route.keyRequired ? '' : ' Without it the request runs without deduplication.'}`,
    schema: { type: 'string', minLength: minBytes, maxLength: maxBytes + 2, pattern: '^[\\x21-\\x7E]+$' },
  };
}

function refusalResponses(route: RouteSpecification, describedBy: string | undefined): OpenApiObject {
  const byStatus = new Map<number, ProblemCode[]>();
  for (const code of refusalsOf(route)) {
    const { status } = problemCatalogue[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, codes]) => [String(status), response(route, status, codes, describedBy)]),
  );
}

function response(
  route: RouteSpecification,
  status: number,
  codes: readonly ProblemCode[],
  describedBy: string | undefined,
): OpenApiObject {
  const headers: Record<string, OpenApiObject> = {};
  if (LINKED.has(status) && describedBy !== undefined)
    headers.Link = {
      description: `<${describedBy}>; rel="describedby": this specification.`,
      schema: { type: 'string' },
    };
  if (codes.some((code) => code === 'operation-in-progress' || problemCatalogue[code].status === 503))
    headers['Retry-After'] = {
      description: 'Seconds to wait before retrying with the same key.',
      schema: { type: 'integer' },
    };
  if (status === 410)
    headers.Location = { description: 'The resource the operation made, when known.', schema: { type: 'string' } };
  return {
    description: codes.map((code) => `${code}: ${problemCatalogue[code].title}`).join('; '),
    ...(Object.keys(headers).length === 0 ? {} : { headers }),
    content: {
      'application/problem+json': {
        schema: problemSchema(route, codes),
        examples: Object.fromEntries(codes.map((code) => [code, { value: example(route, code) }])),
      },
    },
  };
}

function problemSchema(route: RouteSpecification, codes: readonly ProblemCode[]): OpenApiObject {
  return {
    type: 'object',
    required: ['type', 'title', 'status', 'applied', 'retry'],
    properties: {
      type: { type: 'string', enum: codes.map((code) => `${route.problemBase}${code}`) },
      title: { type: 'string' },
      status: { type: 'integer' },
      detail: { type: 'string' },
      applied: { type: 'string', enum: ['no', 'yes', 'unknown'] },
      retry: { type: 'string', enum: ['same-key', 'new-key', 'none'] },
      resource: { type: 'string' },
    },
  };
}

function example(route: RouteSpecification, code: ProblemCode): OpenApiObject {
  const { status, title, applied, retry } = problemCatalogue[code];
  return { type: `${route.problemBase}${code}`, title, status, applied, retry };
}

function idempotencyExtension(route: RouteSpecification): OpenApiObject {
  return {
    operation: route.operation,
    mode: route.mode,
    key: {
      required: route.keyRequired,
      source: route.keySource === 'header' ? 'Idempotency-Key' : 'route',
      minBytes: route.keyLimits.minBytes,
      maxBytes: route.keyLimits.maxBytes,
      scope: route.perPrincipal ? 'tenant and user' : 'tenant',
    },
    expiry: {
      responseSeconds: route.retention.responseSeconds,
      tombstoneSeconds: route.retention.tombstoneSeconds,
      perOperation: route.retention.perOperation,
      afterResponse: `${route.problemBase}response-expired`,
      afterTombstone: 'new-operation',
    },
    fingerprint: route.fingerprint,
    replayHeader: 'Idempotent-Replayed: true',
    ...(route.lockTimeoutMs === undefined ? {} : { lockTimeoutMs: route.lockTimeoutMs }),
    refusals: refusalsOf(route).map((code) => {
      const { status, applied, retry } = problemCatalogue[code];
      return { code, status, applied, retry };
    }),
  };
}

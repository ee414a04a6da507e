import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { problemCatalogue } from '../answer/problems.js';
import { openApiDocument, openApiPathItem, type OpenApiObject, type OpenApiValue } from './openapi.js';
import { refusalsOf, type RouteSpecification } from './route-specification.js';

const atomic: RouteSpecification = {
  operation: 'orders.create@1',
  mode: 'atomic',
  keyRequired: true,
  keySource: 'header',
  keyLimits: { minBytes: 8, maxBytes: 64 },
  retention: { responseSeconds: 3600, tombstoneSeconds: 7 * 86_400, perOperation: false },
  fingerprint: 'default',
  perPrincipal: true,
  lockTimeoutMs: 3000,
  problemBase: 'https://example.com/problems/',
};
const leased: RouteSpecification = {
  ...atomic,
  operation: 'payments.create@2',
  mode: 'leased',
  keyRequired: false,
  keySource: 'route',
  perPrincipal: false,
  lockTimeoutMs: undefined,
};

/** Every value found under `member` anywhere in `value`. */
function membersNamed(value: OpenApiValue, member: string): OpenApiValue[] {
  if (Array.isArray(value)) return value.flatMap((item: OpenApiValue) => membersNamed(item, member));
  if (typeof value !== 'object' || value === null) return [];
  const object = value as OpenApiObject;
  return Object.entries(object).flatMap(([name, inner]) => [
    ...(name === member ? [inner] : []),
    ...membersNamed(inner, member),
  ]);
}

describe('the OpenAPI document of the published specification', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(
      structuredClone(openApiDocument([atomic, leased], { describedBy: '/idempotency' })),
    );
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('lists only problem codes of the catalogue, each under its own status', () => {
    const item = openApiPathItem(atomic, '/idempotency');
    const types = membersNamed(item, 'type').filter((type): type is string => typeof type === 'string');
    const codes = types
      .filter((type) => type.startsWith(atomic.problemBase))
      .map((type) => type.slice(atomic.problemBase.length));
    expect(codes.length).toBeGreaterThan(0);
    for (const code of codes) expect(Object.keys(problemCatalogue)).toContain(code);
    const extension = membersNamed(item, 'x-idempotency')[0] as { refusals: { code: string; status: number }[] };
    expect(extension.refusals.map((refusal) => refusal.code)).toEqual(refusalsOf(atomic));
    for (const { code, status } of extension.refusals)
      expect(status).toBe(problemCatalogue[code as keyof typeof problemCatalogue].status);
  });

  it("states the route's key, its expiry and each refusal's guidance", () => {
    const item = openApiPathItem(atomic, '/idempotency') as {
      post: {
        parameters: { name: string; in: string; required: boolean; schema: { minLength: number } }[];
        responses: Record<string, { headers?: Record<string, unknown>; content: Record<string, unknown> }>;
        'x-idempotency': { expiry: Record<string, unknown> };
      };
    };
    expect(item.post.parameters).toMatchObject([
      { name: 'Idempotency-Key', in: 'header', required: true, schema: { minLength: 8 } },
    ]);
    expect(item.post['x-idempotency'].expiry).toEqual({
      responseSeconds: 3600,
      tombstoneSeconds: 604_800,
      perOperation: false,
      afterResponse: 'https://example.com/problems/response-expired',
      afterTombstone: 'new-operation',
    });
    expect(Object.keys(item.post.responses).sort()).toEqual(['400', '401', '403', '409', '410', '422', '500', '503']);
    for (const status of ['400', '409', '422']) expect(item.post.responses[status]?.headers).toHaveProperty('Link');
    expect(item.post.responses['409']?.headers).toHaveProperty('Retry-After');
    expect(membersNamed(item.post.responses['422'] as OpenApiValue, 'value')).toEqual([
      {
        type: 'https://example.com/problems/fingerprint-mismatch',
        title: problemCatalogue['fingerprint-mismatch'].title,
        status: 422,
        applied: 'no',
        retry: 'new-key',
      },
    ]);
  });

  it('leaves out what a route cannot answer, and the header a route that reads its key elsewhere does not take', () => {
    const refusals = refusalsOf(leased);
    expect(refusals).not.toContain('idempotency-key-missing');
    expect(refusals).not.toContain('key-of-another-principal');
    expect(refusals).not.toContain('transaction-aborted');
    expect(refusals).toContain('outcome-unknown');
    expect(refusalsOf(atomic)).not.toContain('outcome-unknown');
    expect((openApiPathItem(leased) as { post: { parameters: unknown[] } }).post.parameters).toEqual([]);
  });
});

import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { propagation } from '@opentelemetry/api';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { idempotentFetch } from '../../src/client/index.js';
import { openTelemetryTracing } from '../../src/otel/index.js';
import { useOpenTelemetry } from '../observe/otel-sdk.js';
import { problemAnswer, type ScriptedServer, startScriptedServer } from './scripted-server.js';

const otel = useOpenTelemetry();
const quick = { baseDelayMs: 10, maxDelayMs: 50 };

describe('the client traced with OpenTelemetry', () => {
  let server: ScriptedServer | undefined;
  beforeAll(() => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => propagation.disable());
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('gives each attempt a client span, counts resends in http.request.resend_count, and sends each span as traceparent', async () => {
    server = await startScriptedServer((_request, index) =>
      index < 2
        ? problemAnswer(503, 'store-unavailable')
        : { status: 201, headers: { 'idempotent-replayed': 'true' }, body: '{}' },
    );
    const result = await idempotentFetch(`${server.url}/orders?secret=1`, {
      method: 'POST',
      body: '{}',
      retry: quick,
      tracing: openTelemetryTracing({ tracer: otel.tracer }),
    });
    expect(result.attempts).toBe(3);

    const spans = otel.spans();
    expect(
      spans.map((s) => [
        s.name,
        s.kind,
        s.attributes['http.request.resend_count'],
        s.attributes['http.response.status_code'],
      ]),
    ).toEqual([
      ['POST', SpanKind.CLIENT, undefined, 503],
      ['POST', SpanKind.CLIENT, 1, 503],
      ['POST', SpanKind.CLIENT, 2, 201],
    ]);
    expect(spans.map((s) => s.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.ERROR, SpanStatusCode.UNSET]);
    expect(spans[0]?.attributes['error.type']).toBe('503');
    expect(spans[2]?.attributes['retrysafe.replayed']).toBe(true);
    expect(spans[0]?.attributes['url.full']).toBe(`${server.url}/orders`);
    const sent = (server.requests ?? []).map((r) => r.headers.traceparent);
    expect(sent).toEqual(spans.map((s) => `00-${s.spanContext().traceId}-${s.spanContext().spanId}-01`));
  });

  it('marks an attempt that got no answer with its reason', async () => {
    server = await startScriptedServer(() => ({ hang: true }));
    await expect(
      idempotentFetch(`${server.url}/orders`, {
        method: 'POST',
        body: '{}',
        retry: { ...quick, attempts: 2, attemptTimeoutMs: 100 },
        tracing: openTelemetryTracing({ tracer: otel.tracer }),
      }),
    ).rejects.toMatchObject({ code: 'attempts-exhausted' });
    expect(otel.spans().map((s) => [s.attributes['error.type'], s.attributes['http.request.resend_count']])).toEqual([
      ['timeout', undefined],
      ['timeout', 1],
    ]);
  });
});

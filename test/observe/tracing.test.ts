import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openTelemetryTracing } from '../../src/otel/index.js';
import { adapters } from '../support/apps.js';
import { type Engine, engines } from '../support/engines.js';
import { newKey, useApp, useEngine } from '../adapters/harness.js';
import { childrenOf, useOpenTelemetry } from './otel-sdk.js';
import { NOTES, PAYMENTS, runScenarios } from './scenarios.js';

const otel = useOpenTelemetry();
const tracing = openTelemetryTracing({ tracer: otel.tracer });

const attempts = (spans: readonly ReadableSpan[]): readonly ReadableSpan[] =>
  spans.filter((s) => /^retrysafe (atomic|leased|transparent)$/.test(s.name));
const outcomeOf = (span: ReadableSpan): unknown => span.attributes['retrysafe.outcome'];

describe.each(engines)('OpenTelemetry spans on $name', (factory) => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());
  beforeEach(() => engine.database.query('DELETE FROM retrysafe_operations'));

  it('gives every attempt one span with its outcome, store calls, lock waits and steps as children, and no tenant or key', async () => {
    const secrets = await runScenarios(engine, [], undefined, tracing);
    const spans = otel.spans();
    const all = attempts(spans);
    const notes = all.filter((s) => s.attributes['retrysafe.operation'] === NOTES);
    const payments = all.filter((s) => s.attributes['retrysafe.operation'] === PAYMENTS);
    expect(notes.map(outcomeOf).sort()).toEqual(['mismatch', 'new', 'replayed', 'store-unavailable']);
    expect(payments.map(outcomeOf).sort()).toEqual(['conflict', 'fenced', 'resumed', 'unknown']);
    for (const span of all) {
      expect(span.attributes['retrysafe.mode']).toBe(
        span.attributes['retrysafe.operation'] === NOTES ? 'atomic' : 'leased',
      );
      expect(span.kind).toBe(SpanKind.INTERNAL);
    }

    const created = notes.find((s) => outcomeOf(s) === 'new');
    if (created === undefined) throw new Error('no new note');
    expect(childrenOf(spans, created).map((s) => s.name)).toEqual(
      expect.arrayContaining(['retrysafe store claim', 'retrysafe store complete', 'retrysafe store commit']),
    );
    expect(created.attributes).toMatchObject({ 'retrysafe.handler.status': 201, 'retrysafe.stored': true });

    // The duplicate waited behind the first attempt: on a server, on the record's lock, which is a lock wait. PGlite runs
    // one transaction at a time, so there it waited before reaching the database, on no lock. The mismatch found a
    // finished record: a plain replay, never a lock wait.
    const waits = spans.filter((s) => s.name === 'retrysafe lock-wait');
    expect(waits).toHaveLength(engine.concurrent ? 1 : 0);
    for (const wait of waits)
      expect(notes.map((s) => s.spanContext().spanId)).toContain(wait.parentSpanContext?.spanId);

    const down = notes.find((s) => outcomeOf(s) === 'store-unavailable');
    const failedClaim = childrenOf(spans, down ?? created).find((s) => s.name === 'retrysafe store claim');
    expect(failedClaim?.status.code).toBe(SpanStatusCode.ERROR);
    expect(failedClaim?.attributes['error.type']).toBe('store-unavailable');
    expect(down?.attributes['retrysafe.problem']).toBe('store-unavailable');

    // A leased attempt's step is its child, and the step's checkpoint is the step's child.
    const paid = payments.find((s) => outcomeOf(s) === 'unknown');
    if (paid === undefined) throw new Error('no unknown payment');
    const step = childrenOf(spans, paid).find((s) => s.name === 'retrysafe step');
    expect(step?.attributes).toMatchObject({
      'retrysafe.step': 'charge',
      'retrysafe.step.kind': 'call',
      'retrysafe.operation': PAYMENTS,
    });
    if (step === undefined) throw new Error('no step span');
    expect(childrenOf(spans, step).map((s) => s.name)).toContain('retrysafe store checkpoint');
    expect(childrenOf(spans, paid).map((s) => s.name)).toContain('retrysafe store mark-unknown');

    // The recovery worker's run of the payment it took over: an attempt span of its own, marked as a recovery.
    const recovered = all.filter((s) => s.attributes['retrysafe.recovery'] === true);
    expect(
      recovered.map((s) => [s.attributes['retrysafe.operation'], s.attributes['retrysafe.mode'], outcomeOf(s)]),
    ).toEqual([[PAYMENTS, 'leased', 'resumed']]);
    const recovery = recovered[0];
    if (recovery === undefined) throw new Error('no recovery span');
    expect(recovery.attributes).toMatchObject({ 'retrysafe.handler.status': 201, 'retrysafe.stored': true });
    expect(childrenOf(spans, recovery).map((s) => s.name)).toEqual(
      expect.arrayContaining(['retrysafe store take-over', 'retrysafe step', 'retrysafe store complete-lease']),
    );

    const values = spans.flatMap((s) => Object.values(s.attributes).map(String));
    for (const secret of [...secrets.tenants, ...secrets.keys, ...secrets.bodyValues]) {
      expect(values.filter((value) => value.includes(secret))).toEqual([]);
    }
  });
});

describe.each(engines)('OpenTelemetry spans over HTTP on $name', (engine) => {
  const ref = useEngine(engine);
  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter, { tracing });

    it('traces a first attempt as new and its retry as replayed, under the same operation', async () => {
      const key = newKey();
      expect((await t.post({ key, body: { sku: 'A' } })).status).toBe(201);
      expect((await t.post({ key, body: { sku: 'A' } })).status).toBe(201);
      expect((await t.post({ key, body: { sku: 'B' } })).status).toBe(422);
      expect((await t.post({ key: '' })).status).toBe(400);
      expect((await t.send('GET', '/orders')).status).toBe(200);
      const spans = attempts(otel.spans());
      expect(
        spans.map((s) => [s.attributes['retrysafe.operation'], s.attributes['retrysafe.mode'], outcomeOf(s)]),
      ).toEqual([
        ['orders.create@1', 'atomic', 'new'],
        ['orders.create@1', 'atomic', 'replayed'],
        ['orders.create@1', 'atomic', 'mismatch'],
        ['orders.create@1', 'atomic', 'refused'],
        ['orders.read@1', 'atomic', 'unclaimed'],
      ]);
      expect(spans[3]?.attributes['retrysafe.problem']).toBe('idempotency-key-invalid');
      expect(JSON.stringify(otel.spans().map((s) => s.attributes))).not.toContain(key);
    });
  });
});

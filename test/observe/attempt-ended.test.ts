import { randomUUID } from 'node:crypto';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { SpanStatusCode } from '@opentelemetry/api';
import { Registry } from 'prom-client';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { leased, transparent } from '../../src/adapters/fetch/index.js';
import type { RetrysafeEvent } from '../../src/core/events.js';
import { idempotency, type Idempotency } from '../../src/modes/idempotency.js';
import { idempotent } from '../../src/modes/idempotent.js';
import { DIAGNOSTICS_PREFIX, type LogEntry, logObserver, metricsObserver } from '../../src/observe/index.js';
import { openTelemetryTracing } from '../../src/otel/index.js';
import { operatorStore } from '../../src/postgres/postgres-operator-store.js';
import { postgresStore } from '../../src/postgres/postgres-store.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type Engine, engines } from '../support/engines.js';
import { useOpenTelemetry } from './otel-sdk.js';

const otel = useOpenTelemetry();
const CHANNEL = `${DIAGNOSTICS_PREFIX}attempt-ended`;

/** What every place that counts attempts saw of them. */
interface Watch {
  readonly config: Idempotency<SqlClient>;
  readonly registry: Registry;
  readonly events: RetrysafeEvent[];
  readonly lines: LogEntry[];
  readonly published: unknown[];
}

/** A thrown error with a stable code, as a driver or an application gives one. */
function outOfStock(): Error {
  return Object.assign(new Error('out of stock: sku A-1 for customer 42'), { code: 'OUT_OF_STOCK' });
}

describe.each(engines)('the end of every attempt on $name', (factory) => {
  let engine: Engine;
  const listeners: ((message: unknown) => void)[] = [];
  beforeAll(async () => {
    engine = await factory.open();
  });
  afterAll(() => engine.close());
  afterEach(async () => {
    for (const listener of listeners.splice(0)) unsubscribe(CHANNEL, listener);
    await engine.database.query('DELETE FROM retrysafe_activity');
  });

  function watch(): Watch {
    const registry = new Registry();
    const events: RetrysafeEvent[] = [];
    const lines: LogEntry[] = [];
    const published: unknown[] = [];
    const listener = (message: unknown): void => {
      published.push(message);
    };
    listeners.push(listener);
    subscribe(CHANNEL, listener);
    const log =
      (level: LogEntry['level']) =>
      (fields: object, message: string): void => {
        lines.push({ level, message, fields: fields as LogEntry['fields'] });
      };
    const config = idempotency({
      store: postgresStore(engine.database),
      observers: [
        metricsObserver(registry),
        logObserver({ info: log('info'), warn: log('warn'), error: log('error') }, { identitySecret: 'secret' }),
        (event) => events.push(event),
      ],
      tracing: openTelemetryTracing({ tracer: otel.tracer }),
      // Only close() flushes: what a test reads is what it flushed.
      activity: { flushIntervalMs: 3_600_000 },
    });
    return { config, registry, events, lines, published };
  }

  async function attempts(registry: Registry, labels: Readonly<Record<string, string>>): Promise<number> {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'retrysafe_attempts_total');
    return (metric?.values ?? [])
      .filter((v) => Object.entries(labels).every(([name, value]) => v.labels[name] === value))
      .reduce((sum, v) => sum + v.value, 0);
  }

  /** The activity the console reads, summed over the last hours (a test may run across one's end). */
  async function activity(operation: string): Promise<Record<string, number>> {
    const { rows } = await engine.database.query<{ kind: string; n: number }>(
      'SELECT kind, sum(n)::int AS n FROM retrysafe_activity WHERE operation = $1 GROUP BY kind',
      [operation],
    );
    return Object.fromEntries(rows.map((row) => [row.kind, row.n]));
  }

  it('tells a handler that throws in atomic mode everywhere: event, metric, log, diagnostics channel, span and console', async () => {
    const { config, registry, events, lines, published } = watch();
    const failure = outOfStock();
    const key = randomUUID();
    const operation = 'stock.reserve@1';
    await expect(
      idempotent(
        config,
        async (tx) => {
          await tx.query('SELECT 1');
          throw failure;
        },
        { operation, key },
      ),
    ).rejects.toBe(failure);

    const identity = { tenant: 'default', operation, key };
    const ended = {
      type: 'attempt-ended',
      identity,
      operation,
      mode: 'atomic',
      outcome: 'threw',
      error: 'OUT_OF_STOCK',
    };
    expect(events.map((event) => event.type)).toEqual(['claimed', 'attempt-ended']);
    expect(events[1]).toEqual(ended);
    expect(published).toEqual([ended]);
    expect(await attempts(registry, { operation, mode: 'atomic', outcome: 'threw' })).toBe(1);
    expect(await attempts(registry, {})).toBe(1);
    const line = lines.find((entry) => entry.fields.event === 'attempt-ended');
    expect(line).toMatchObject({
      level: 'warn',
      fields: { operation, mode: 'atomic', outcome: 'threw', errorCode: 'OUT_OF_STOCK' },
    });
    // The code, never the message: it may carry request data.
    expect(JSON.stringify(lines)).not.toContain('customer 42');
    const [span] = otel.spans().filter((s) => s.name === 'retrysafe atomic');
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes['retrysafe.end']).toBe('threw');

    await config.close();
    expect(await activity(operation)).toEqual({ new: 1, failed: 1 });
    const buckets = await operatorStore(engine.database).activity(24);
    expect(buckets.reduce((total, bucket) => total + bucket.counts.failed, 0)).toBe(1);
  });

  it('ends every atomic attempt once, by how it ended: completed, replayed, mismatch and thrown', async () => {
    const { config, registry, events } = watch();
    const operation = 'stock.count@1';
    const key = randomUUID();
    const run = (input: unknown, answer: () => Promise<unknown>) =>
      idempotent(config, answer, { operation, key, input }).catch((error: unknown) => error);
    await run({ n: 1 }, () => Promise.resolve('ok'));
    await run({ n: 1 }, () => Promise.resolve('again'));
    await run({ n: 2 }, () => Promise.resolve('other'));
    await idempotent(config, () => Promise.reject(outOfStock()), { operation, key: randomUUID() }).catch(() => 0);
    const ends = events.flatMap((event) => (event.type === 'attempt-ended' ? [[event.outcome, event.error]] : []));
    expect(ends).toEqual([
      ['completed', undefined],
      ['replayed', undefined],
      ['mismatch', undefined],
      ['threw', 'OUT_OF_STOCK'],
    ]);
    expect(await attempts(registry, { operation, mode: 'atomic' })).toBe(4);
    await config.close();
    expect(await activity(operation)).toEqual({ new: 2, replay: 1, mismatch: 1, failed: 1 });
  });

  it('ends an atomic attempt whose statement the server cut as threw, with the problem it was answered with', async (context) => {
    // PGlite runs no timer of its own: a statement there is never cut.
    if (!engine.concurrent) context.skip();
    const registry = new Registry();
    const events: RetrysafeEvent[] = [];
    const config = idempotency({
      store: postgresStore(engine.database),
      statementTimeoutMs: 100,
      observers: [metricsObserver(registry), (event) => events.push(event)],
      tracing: openTelemetryTracing({ tracer: otel.tracer }),
      activity: false,
    });
    const operation = 'stock.audit@1';
    const outcome = await idempotent(config, (tx) => tx.query('SELECT pg_sleep(30)'), { operation, key: randomUUID() });
    expect(outcome).toMatchObject({ kind: 'refused', code: 'statement-timeout' });
    expect(events.filter((event) => event.type === 'attempt-ended')).toMatchObject([
      { operation, mode: 'atomic', outcome: 'threw', error: 'statement-timeout' },
    ]);
    expect(await attempts(registry, { operation, outcome: 'threw' })).toBe(1);
    const [span] = otel.spans().filter((s) => s.name === 'retrysafe atomic');
    expect(span?.status.code).toBe(SpanStatusCode.ERROR);
    expect(span?.attributes['error.type']).toBe('statement-timeout');
  });

  it('tells a leased handler that throws, and a transparent route that throws once its answer is stored', async () => {
    const { config, registry, events, published } = watch();
    const pay = leased(config, {
      operation: 'payments.refund@1',
      tenant: () => 'default',
      handler: () => Promise.reject(outOfStock()),
    });
    const send = transparent(config, { operation: 'imports.start@1', tenant: () => 'default' }, () => {
      throw outOfStock();
    });
    const request = () =>
      new Request('http://service.test/', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
        body: '{}',
      });
    await expect(pay(request(), undefined)).rejects.toMatchObject({ code: 'OUT_OF_STOCK' });
    await expect(send(request(), undefined)).rejects.toMatchObject({ code: 'OUT_OF_STOCK' });

    const ends = events.filter((event) => event.type === 'attempt-ended');
    expect(ends).toMatchObject([
      { operation: 'payments.refund@1', mode: 'leased', outcome: 'threw', error: 'OUT_OF_STOCK' },
      { operation: 'imports.start@1', mode: 'transparent', outcome: 'threw', error: 'OUT_OF_STOCK' },
    ]);
    // The transparent attempt ends after its answer is stored, not when its claim returns.
    const types = events.map((event) => event.type);
    expect(types.lastIndexOf('finished')).toBeLessThan(types.lastIndexOf('attempt-ended'));
    expect(published).toHaveLength(2);
    expect(await attempts(registry, { mode: 'leased', outcome: 'threw' })).toBe(1);
    expect(await attempts(registry, { mode: 'transparent', outcome: 'threw' })).toBe(1);
    await config.close();
    expect(await activity('payments.refund@1')).toEqual({ new: 1, failed: 1 });
    expect(await activity('imports.start@1')).toEqual({ new: 1, failed: 1 });
  });
});

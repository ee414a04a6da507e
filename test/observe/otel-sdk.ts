import { context, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach } from 'vitest';

export interface RecordedSpans {
  readonly tracer: Tracer;
  /** Every ended span since the test began. */
  spans(): readonly ReadableSpan[];
}

/**
 * The OpenTelemetry SDK as an application runs it: a tracer provider whose
 * spans go to an in-memory exporter, and the async-hooks context manager so
 * that a span started inside another's callback becomes its child.
 */
export function useOpenTelemetry(): RecordedSpans {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const manager = new AsyncLocalStorageContextManager();
  beforeAll(() => {
    context.setGlobalContextManager(manager.enable());
  });
  afterAll(async () => {
    context.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());
  return { tracer: provider.getTracer('retrysafe-test'), spans: () => exporter.getFinishedSpans() };
}

/** The spans whose parent is `parent`. */
export function childrenOf(spans: readonly ReadableSpan[], parent: ReadableSpan): readonly ReadableSpan[] {
  return spans.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
}

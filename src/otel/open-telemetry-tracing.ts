import { context, propagation, type Span, SpanKind, SpanStatusCode, trace, type Tracer } from '@opentelemetry/api';
import { errorType, type SpanAttributes, type SpanHandle, type Tracing } from '../core/tracing.js';

export interface OpenTelemetryTracingOptions {
  /** Default: `trace.getTracer('retrysafe')`, from the globally registered provider. */
  readonly tracer?: Tracer;
}

const KINDS = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT } as const;

/**
 * retrysafe's tracing seam on `@opentelemetry/api`. Parent and child come
 * from the API's active context, so the application's HTTP server span is the
 * parent of each attempt, and a context manager must be registered (the
 * Node SDK registers one) for children to find their attempt.
 */
export function openTelemetryTracing(options: OpenTelemetryTracingOptions = {}): Tracing {
  const tracer = options.tracer ?? trace.getTracer('retrysafe');
  return {
    active: (name, kind, attributes, work) =>
      tracer.startActiveSpan(name, { kind: KINDS[kind], attributes }, async (span) => {
        try {
          return await work(handle(span));
        } catch (error) {
          fail(span, error);
          throw error;
        } finally {
          span.end();
        }
      }),
    start: (name: string, attributes: SpanAttributes, startTime?: number) =>
      handle(tracer.startSpan(name, { attributes, startTime }, context.active())),
    inject: (headers) => {
      propagation.inject(context.active(), headers, { set: (carrier, key, value) => carrier.set(key, value) });
    },
  };
}

function handle(span: Span): SpanHandle {
  return {
    setAttributes: (attributes) => span.setAttributes(attributes),
    fail: (error) => fail(span, error),
    end: (endTime) => span.end(endTime),
  };
}

function fail(span: Span, error: unknown): void {
  span.setStatus({ code: SpanStatusCode.ERROR });
  span.setAttribute('error.type', errorType(error));
}

/**
 * The tracing seam: the few things retrysafe asks of a tracer, so that the
 * core loads no tracing library. `retrysafe/otel` implements it on
 * `@opentelemetry/api`; without one, nothing is traced.
 */

/** Span attribute values; never a tenant, a key or a body unless the application asks. */
export type SpanAttributes = Readonly<Record<string, string | number | boolean>>;

/** `client` for an outgoing HTTP attempt, `internal` for everything else. */
export type SpanKind = 'internal' | 'client';

export interface SpanHandle {
  setAttributes(this: void, attributes: SpanAttributes): void;
  /** Marks the span failed; `error.type` is its code or class, never its message. */
  fail(this: void, error: unknown): void;
  /** Ends the span now, or at `endTime` (milliseconds since the epoch). */
  end(this: void, endTime?: number): void;
}

export interface Tracing {
  /**
   * Runs `work` in a new span, child of the active one; the span is active
   * for everything `work` starts, and ends when `work` settles.
   */
  active<T>(
    this: void,
    name: string,
    kind: SpanKind,
    attributes: SpanAttributes,
    work: (span: SpanHandle) => Promise<T>,
  ): Promise<T>;
  /** Starts a span, child of the active one, without making it active; `startTime` in milliseconds since the epoch. */
  start(this: void, name: string, attributes: SpanAttributes, startTime?: number): SpanHandle;
  /** Writes the active trace context into outgoing request headers. */
  inject(this: void, headers: Headers): void;
}

/** `error.type` as OpenTelemetry's conventions have it: a stable code or the class name, never a message that may carry data. */
export function errorType(error: unknown): string {
  if (typeof error === 'object' && error !== null) {
    if ('code' in error && typeof error.code === 'string') return error.code;
    if (error instanceof Error) return error.name;
  }
  return '_OTHER';
}

/** Runs `work` in a span when there is a tracer, and as is otherwise. */
export function inSpan<T>(
  tracing: Tracing | undefined,
  name: string,
  attributes: SpanAttributes,
  work: (span: SpanHandle | undefined) => Promise<T>,
): Promise<T> {
  return tracing === undefined ? work(undefined) : tracing.active(name, 'internal', attributes, work);
}

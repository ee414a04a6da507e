export { openTelemetryTracing, type OpenTelemetryTracingOptions } from './open-telemetry-tracing.js';
export type { SpanAttributes, SpanHandle, SpanKind, Tracing } from '../core/tracing.js';

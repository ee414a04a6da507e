/**
 * What the client asks of a tracer. The client imports nothing outside its
 * own folder, so that it runs in any JavaScript runtime; the `Tracing` of
 * `retrysafe/otel` has these members.
 */
export interface ClientTracing {
  active<T>(
    this: void,
    name: string,
    kind: 'client',
    attributes: Readonly<Record<string, string | number | boolean>>,
    work: (span: ClientSpan) => Promise<T>,
  ): Promise<T>;
  inject(this: void, headers: Headers): void;
}

export interface ClientSpan {
  setAttributes(this: void, attributes: Readonly<Record<string, string | number | boolean>>): void;
  /** Marks the span failed; `error.type` is the error's `code`. */
  fail(this: void, error: { readonly code: string }): void;
}

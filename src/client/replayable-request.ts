import { IdempotentFetchError } from './fetch-error.js';

/** A request whose body is held in memory, so every attempt sends the same bytes. */
export interface ReplayableRequest {
  readonly url: string;
  /** Upper case for the standard methods, as the Fetch API normalises them. */
  readonly method: string;
  /** Includes the `Content-Type` the body implies (form boundary, URL-encoded, text). */
  readonly headers: Headers;
  readonly body: Uint8Array<ArrayBuffer> | undefined;
  /** The rest of the request's settings, passed to every attempt. */
  readonly settings: Pick<
    RequestInit,
    'cache' | 'credentials' | 'integrity' | 'keepalive' | 'mode' | 'redirect' | 'referrer' | 'referrerPolicy'
  >;
}

/**
 * Reads the body once, before the first attempt. Any body the Fetch API takes
 * (string, bytes, URLSearchParams, Blob, FormData) is accepted, as is a
 * `Request`'s body, read to its end. A stream or async iterable given as
 * `init.body` is refused: it may be unbounded, and it is gone after one send.
 */
export async function replayableRequest(
  input: RequestInfo | URL,
  init: RequestInit,
  idempotencyKey: string | undefined,
): Promise<ReplayableRequest> {
  if (isStream(init.body)) {
    throw new IdempotentFetchError(
      'body-not-replayable',
      'A streamed body cannot be sent again on a retry; pass a string, bytes, Blob, FormData or URLSearchParams instead.',
      {
        attempts: 0,
        idempotencyKey,
      },
    );
  }
  const template = new Request(input, { ...init, signal: null });
  const body = template.body === null ? undefined : new Uint8Array(await template.arrayBuffer());
  return {
    url: template.url,
    method: template.method,
    headers: template.headers,
    body,
    settings: {
      cache: template.cache,
      credentials: template.credentials,
      integrity: template.integrity,
      keepalive: template.keepalive,
      mode: template.mode,
      redirect: template.redirect,
      referrer: template.referrer,
      referrerPolicy: template.referrerPolicy,
    },
  };
}

function isStream(body: RequestInit['body'] | undefined): boolean {
  if (typeof body !== 'object' || body === null) return false;
  return (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) || Symbol.asyncIterator in body;
}

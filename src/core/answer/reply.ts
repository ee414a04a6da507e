import { RetrysafeError } from '../errors.js';
import { type Problem, problemCatalogue, problemDocument } from './problems.js';
import { extend } from '../extend.js';

/** A header's value: a list for a header sent on several lines (`Link`, `Vary`), kept line for line and in order. */
export type HeaderValue = string | string[];

/** What a route handler answers. A body that is not bytes or a string is sent as JSON. */
export interface HandlerReply {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string | readonly string[]>>;
  readonly body?: unknown;
}

/** A response in its final form: the exact bytes sent, and stored when the policy allows. */
export interface Reply {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, HeaderValue>>;
  readonly body: Uint8Array;
}

export const REPLAYED_HEADER = 'idempotent-replayed';

/** A header's lines as they are kept: one line as a string, several as a list in their order. */
export function headerValue(lines: string | readonly string[]): HeaderValue {
  if (typeof lines === 'string') return lines;
  return lines.length === 1 ? (lines[0] as string) : [...lines];
}

/** Serialises a handler's answer once, so the bytes sent and the bytes stored are the same. */
export function toReply(answer: HandlerReply): Reply {
  if (!Number.isInteger(answer.status) || answer.status < 200 || answer.status > 599) {
    throw new RangeError(`A handler answered with status ${answer.status}; it must be an integer from 200 to 599.`);
  }
  const headers: Record<string, HeaderValue> = {};
  for (const [name, value] of Object.entries(answer.headers ?? {})) headers[name.toLowerCase()] = headerValue(value);
  const { body } = answer;
  if (body === undefined || body === null) return { status: answer.status, headers, body: new Uint8Array() };
  if (body instanceof Uint8Array) return { status: answer.status, headers, body };
  if (isStream(body)) {
    throw new RetrysafeError(
      'misuse',
      'A handler answered with a stream. retrysafe stores and replays whole answers only: answer bytes, a string or JSON, or serve the stream from a route without retrysafe (see docs/recipes.md).',
    );
  }
  if (typeof body === 'string') {
    headers['content-type'] ??= 'text/plain; charset=utf-8';
    return { status: answer.status, headers, body: Buffer.from(body, 'utf8') };
  }
  headers['content-type'] ??= 'application/json; charset=utf-8';
  return { status: answer.status, headers, body: Buffer.from(JSON.stringify(body), 'utf8') };
}

/** Statuses whose answers point at the idempotency policy, as the IETF Idempotency-Key draft recommends. */
const DESCRIBED_STATUSES = new Set([400, 409, 422]);

/** A body that arrives over time: a web or Node stream, an async iterable, or a Blob read later. */
export function isStream(body: unknown): boolean {
  if (typeof body !== 'object' || body === null) return false;
  return (
    Symbol.asyncIterator in body ||
    ('getReader' in body && typeof body.getReader === 'function') ||
    ('pipe' in body && typeof body.pipe === 'function') ||
    (typeof Blob !== 'undefined' && body instanceof Blob)
  );
}

/** A problem's response; `describedBy`, the URL of the route's idempotency policy, is linked from 400, 409 and 422 answers. */
export function problemReply(p: Problem, base?: string, describedBy?: string): Reply {
  const headers: Record<string, HeaderValue> = { 'content-type': 'application/problem+json' };
  if (describedBy !== undefined && DESCRIBED_STATUSES.has(problemCatalogue[p.code].status))
    headers.link = `<${describedBy}>; rel="describedby"`;
  if (p.retryAfter !== undefined) headers['retry-after'] = String(p.retryAfter);
  if (p.resource !== undefined) headers.location = p.resource;
  return {
    status: problemCatalogue[p.code].status,
    headers,
    body: Buffer.from(JSON.stringify(problemDocument(p, base)), 'utf8'),
  };
}

/**
 * A record kept in memory (`replayCache`) is replayed with the same reply
 * every time: its replayed form is made once and shared, frozen, so that no
 * sender can change it for the next. Copying the headers on every replay was
 * 3 % of a cached replay's CPU.
 */
const replayedForms = new WeakMap<Reply, Reply>();

export function replayed(reply: Reply): Reply {
  const known = replayedForms.get(reply);
  if (known !== undefined) return known;
  const form = Object.freeze({
    status: reply.status,
    headers: Object.freeze(extend(reply.headers, { [REPLAYED_HEADER]: 'true' })),
    body: reply.body,
  });
  replayedForms.set(reply, form);
  return form;
}

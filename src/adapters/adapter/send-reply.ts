import { crashPoint } from '../../core/crash-point.js';
import type { HeaderValue, Reply } from '../../core/answer/reply.js';

/** How a framework sends an answer: its status and headers first, then the whole body at once. */
export interface ResponseSink<Sent> {
  /** A header with a list of values is sent on as many lines, in order. */
  head(status: number, headers: Readonly<Record<string, HeaderValue>>): void;
  end(body: Buffer): Sent;
}

/** Sends an answer, retrysafe's own or a route's captured one, exactly: status, headers, then the stored bytes. */
export function sendReply<Sent>(sink: ResponseSink<Sent>, reply: Reply): Sent {
  sink.head(reply.status, reply.headers);
  return sendBody((body) => sink.end(body), reply.body);
}

/** Ends a response whose status and headers are in place: the crash tests kill the process here, between the two. */
export function sendBody<Sent>(end: (body: Buffer) => Sent, body: Uint8Array): Sent {
  crashPoint('while-serialising');
  // A view, not a copy, and none at all for the Buffer a store or a replay cache returns.
  return end(Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength));
}

/** A web-standard `Response` carrying `reply` exactly. */
export function toResponse(reply: Reply): Response {
  return sendReply(webResponse(), reply);
}

function webResponse(): ResponseSink<Response> {
  let init: ResponseInit = {};
  return {
    // A web `Headers` joins a repeated header other than Set-Cookie into one line with ", " when it is sent, as the Fetch standard says.
    head: (status, headers) =>
      (init = {
        status,
        headers: Object.entries(headers).flatMap(([name, value]) =>
          typeof value === 'string'
            ? [[name, value] as [string, string]]
            : value.map((line): [string, string] => [name, line]),
        ),
      }),
    end: (body) =>
      new Response(
        body.byteLength === 0 || init.status === 204 || init.status === 304 ? null : (body as Uint8Array<ArrayBuffer>),
        init,
      ),
  };
}

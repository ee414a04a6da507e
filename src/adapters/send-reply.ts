import { crashPoint } from '../core/crash-point.js';
import type { HeaderValue, Reply } from '../core/reply.js';

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
  return end(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
}

import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import type { Response } from 'express';
import { sendBody } from '../adapter/send-reply.js';

type Written = (error?: Error | null) => void;

export interface HeldBack {
  /** Puts the real methods back and sends the held response. */
  release(body: Buffer): void;
  /** Puts the real methods back and forgets what was held, for an error handler to answer instead. */
  drop(): void;
}

/**
 * Replaces `writeHead`, `write` and `end` on this one response so that the
 * status, headers and body are kept instead of sent; `ended` gets every byte
 * written once the handler ends the response.
 */
export function holdBack(res: Response, ended: (body: Buffer) => void): HeldBack {
  const real = { writeHead: res.writeHead.bind(res), write: res.write.bind(res), end: res.end.bind(res) };
  const chunks: Buffer[] = [];
  const callbacks: Written[] = [];
  let finished = false;
  const hold = (chunk: unknown, encoding: unknown, callback: unknown): void => {
    if (typeof chunk === 'string')
      chunks.push(Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8'));
    else if (chunk instanceof Uint8Array) chunks.push(Buffer.from(chunk));
    const done = typeof encoding === 'function' ? encoding : callback;
    if (typeof done === 'function') callbacks.push(done as Written);
  };
  const restore = (): void => {
    Object.assign(res, real);
  };

  res.writeHead = function heldWriteHead(
    status: number,
    message?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ) {
    res.statusCode = status;
    if (typeof message === 'string') res.statusMessage = message;
    else headers = message;
    if (Array.isArray(headers))
      for (let i = 0; i + 1 < headers.length; i += 2) res.setHeader(String(headers[i]), headers[i + 1] ?? '');
    else for (const [name, value] of Object.entries(headers ?? {})) if (value !== undefined) res.setHeader(name, value);
    return res;
  } as Response['writeHead'];
  res.write = function heldWrite(chunk: unknown, encoding?: unknown, callback?: unknown) {
    hold(chunk, encoding, callback);
    return true;
  } as Response['write'];
  res.end = function heldEnd(chunk?: unknown, encoding?: unknown, callback?: unknown) {
    if (finished) return res;
    finished = true;
    if (typeof chunk === 'function') hold(undefined, chunk, undefined);
    else hold(chunk, encoding, callback);
    ended(Buffer.concat(chunks));
    return res;
  } as Response['end'];

  return {
    release(body) {
      restore();
      sendBody((bytes) => res.end(bytes, () => callbacks.forEach((done) => done())), body);
    },
    drop: restore,
  };
}

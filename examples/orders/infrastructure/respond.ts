import type { FastifyReply } from 'fastify';
import { type HandlerReply, toReply } from 'retrysafe/adapter';

/** Sends a handler reply through the same serialisation retrysafe uses, so every answer is built one way. */
export function respond(reply: FastifyReply, answer: HandlerReply): FastifyReply {
  const { status, headers, body } = toReply(answer);
  return reply
    .code(status)
    .headers(headers)
    .send(Buffer.from(body.buffer, body.byteOffset, body.byteLength));
}

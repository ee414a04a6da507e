import {
  type CallHandler,
  type ExecutionContext,
  Inject,
  Injectable,
  type NestInterceptor,
  StreamableFile,
} from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { from, lastValueFrom, type Observable } from 'rxjs';
import { RetrysafeError } from '../../core/errors.js';
import { type HandlerReply, isStream, toReply, type Reply } from '../../core/answer/reply.js';
import { runAtomic } from '../../modes/run-atomic.js';
import { runLeased } from '../../modes/run-leased.js';
import { beginTransparent, capturedReply } from '../../modes/begin-transparent.js';
import { toResponse } from '../adapter/send-reply.js';
import { payloadBytes } from '../adapter/payload-bytes.js';
import { enterAtomic } from './atomic-context.js';
import { idempotentRoute, type IdempotentRouteOptions, withModuleOptions } from './idempotent-options.js';
import { incoming, type NestHttpRequest, type NestHttpResponse } from './nest-request.js';
import { RETRYSAFE_OPTIONS, type RetrysafeModuleOptions } from './retrysafe-options.js';
import { extend } from '../../core/extend.js';

/**
 * Runs a route marked `@Idempotent` through retrysafe, on either Nest
 * platform. The answer goes back to Nest as a web `Response` with its exact
 * status, headers and bytes.
 */
export class IdempotencyInterceptor implements NestInterceptor {
  constructor(
    private readonly options: RetrysafeModuleOptions,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const route = this.reflector.getAllAndOverride(idempotentRoute, [context.getHandler(), context.getClass()]) as
      IdempotentRouteOptions | undefined;
    if (route === undefined)
      throw new RetrysafeError(
        'misuse',
        'IdempotencyInterceptor is bound by @Idempotent(...), which gives the route its options.',
      );
    const http = context.switchToHttp();
    const request = http.getRequest<NestHttpRequest>();
    const response = http.getResponse<NestHttpResponse>();
    const definition = withModuleOptions(this.options, route);
    const config = this.options.idempotency;
    if (route.mode === 'leased')
      return answer(runLeased(config, extend(definition, { handler: route.handler }), incoming(request)), response);
    const handle = (): Promise<unknown> =>
      lastValueFrom(next.handle() as Observable<unknown>, { defaultValue: undefined });
    const handled = async (): Promise<HandlerReply> => answerOf(await handle(), response);
    if (route.mode === 'atomic') {
      // The answer goes to the core as the method gave it, so the core's rules apply to it (a stream is refused).
      const handler = (attempt: Parameters<typeof enterAtomic>[1]): Promise<HandlerReply> => {
        enterAtomic(request, attempt);
        return handled();
      };
      return answer(runAtomic(config, extend(definition, { handler }), incoming(request)), response);
    }
    return from(
      beginTransparent(config, definition, incoming(request)).then(async (start) => {
        if (start.kind === 'unkeyed') return handle();
        const reply =
          start.kind === 'answered'
            ? start.reply
            : (await start.attempt.capture(async () => ({ reply: await captured(await handled()) }))).reply;
        return respond(reply, response);
      }),
    );
  }
}
Injectable()(IdempotencyInterceptor);
// Explicit tokens: the interceptor must not depend on emitted decorator metadata.
Inject(RETRYSAFE_OPTIONS)(IdempotencyInterceptor, undefined, 0);
Inject(Reflector)(IdempotencyInterceptor, undefined, 1);

function answer(reply: Promise<Reply>, response: NestHttpResponse): Observable<Response> {
  return from(reply.then((ready) => respond(ready, response)));
}

/**
 * What the route method answered: a web `Response` as it is; anything else is
 * the body (an object as JSON, a `StreamableFile` as its stream), with the
 * status and headers Nest and the method set on the platform's response.
 */
async function answerOf(value: unknown, response: NestHttpResponse): Promise<HandlerReply> {
  if (value instanceof Response)
    return capturedReply(value.status, Object.fromEntries(value.headers), await payloadBytes(value.body));
  const { status, headers } = capturedReply(response.statusCode, response.getHeaders(), new Uint8Array());
  return { status, headers, body: value instanceof StreamableFile ? value.getStream() : value };
}

/** A transparent route's answer, a stream read in full: it is stored, then sent, whatever its form. */
async function captured(answer: HandlerReply): Promise<Reply> {
  return toReply(isStream(answer.body) ? extend(answer, { body: await payloadBytes(answer.body) }) : answer);
}

/**
 * The answer for Nest to send. Headers already on the platform's response
 * with the same value stay as they are, in their own form; a header on
 * several lines is set there too, since a web `Response` would join its lines.
 */
function respond(reply: Reply, response: NestHttpResponse): Response {
  const present = capturedReply(0, response.getHeaders(), new Uint8Array()).headers;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(reply.headers)) {
    if (JSON.stringify(present[name]) === JSON.stringify(value)) continue;
    if (typeof value === 'string') headers[name] = value;
    else response.header(name, value);
  }
  return toResponse(extend(reply, { headers }));
}

import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { RetrysafeError } from '../../core/errors.js';
import type { AtomicContext } from '../../core/route.js';
import type { NestHttpRequest } from './nest-request.js';

/** The atomic attempt each request is in, for `@Tx()`; gone with the request. */
const attempts = new WeakMap<object, AtomicContext<NestHttpRequest, unknown, unknown>>();

export function enterAtomic(request: object, context: AtomicContext<NestHttpRequest, unknown, unknown>): void {
  attempts.set(request, context);
}

function attemptOf(request: object): AtomicContext<NestHttpRequest, unknown, unknown> {
  const attempt = attempts.get(request);
  if (attempt === undefined)
    throw new RetrysafeError('misuse', "@Tx() and @Attempt() are for a route marked @Idempotent({ mode: 'atomic' }).");
  return attempt;
}

/**
 * The transaction that holds the operation record, for a route marked
 * `@Idempotent({ mode: 'atomic' })`: write through it, and the writes commit
 * with the stored answer or not at all. Its type is the data layer's own
 * (`PoolClient` with `fromPg`, say).
 */
export const Tx = createParamDecorator(
  (_data: unknown, context: ExecutionContext) => attemptOf(context.switchToHttp().getRequest<object>()).tx,
);

/**
 * The whole atomic attempt (`tx`, the validated `input`, the `tenant`, the
 * operation `identity`; undefined without a key) for a route marked
 * `@Idempotent({ mode: 'atomic' })`.
 */
export const Attempt = createParamDecorator((_data: unknown, context: ExecutionContext) =>
  attemptOf(context.switchToHttp().getRequest<object>()),
);

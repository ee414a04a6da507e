import { applyDecorators, UseInterceptors } from '@nestjs/common';
import { defineRoute } from '../../core/route.js';
import { IdempotencyInterceptor } from './idempotency-interceptor.js';
import { idempotentRoute, type IdempotentRouteOptions } from './idempotent-options.js';

/** Makes a route idempotent: `@Idempotent({ operation: 'orders.create@1', mode: 'atomic' })`. Needs `RetrysafeModule`. */
export function Idempotent(options: IdempotentRouteOptions): MethodDecorator & ClassDecorator {
  defineRoute(options);
  return applyDecorators(idempotentRoute(options), UseInterceptors(IdempotencyInterceptor));
}

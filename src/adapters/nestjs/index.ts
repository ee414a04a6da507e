export { Attempt, Tx } from './atomic-context.js';
export { IdempotencyInterceptor } from './idempotency-interceptor.js';
export { Idempotent } from './idempotent.js';
export type { IdempotentRouteOptions, RouteOptions } from './idempotent-options.js';
export type { NestHttpRequest, NestHttpResponse } from './nest-request.js';
export { RetrysafeModule, type RetrysafeModuleAsyncOptions } from './retrysafe-module.js';
export { RETRYSAFE_OPTIONS, type RetrysafeModuleOptions } from './retrysafe-options.js';

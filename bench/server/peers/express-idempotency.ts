import type { Request, RequestHandler } from 'express';
import { loadPeer } from './load-peer.js';

/** `express-idempotency-redis-adapter`: each of these methods sends one Redis command (GET, SET, SET, DEL). */
export interface ExpressIdempotencyRedisAdapter {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findByIdempotencyKey(key: string): Promise<unknown>;
  create(resource: unknown): Promise<void>;
  update(resource: unknown): Promise<void>;
  delete(key: string): Promise<void>;
}

interface MiddlewareModule {
  idempotency(options: { dataAdapter: ExpressIdempotencyRedisAdapter }): RequestHandler;
  getSharedIdempotencyService(): { isHit(request: Request): boolean; reportError(request: Request): Promise<void> };
}

type RedisAdapterClass = new (options: { connectionConfig: { url: string } }) => ExpressIdempotencyRedisAdapter;

/** A CommonJS module whose `exports.default` is the class: Node gives it as `default.default`, tsx as `default`. */
interface RedisAdapterModule {
  default: RedisAdapterClass | { default: RedisAdapterClass };
}

export interface ExpressIdempotencyPeer {
  readonly middleware: MiddlewareModule;
  readonly RedisAdapter: RedisAdapterClass;
}

export async function loadExpressIdempotency(): Promise<ExpressIdempotencyPeer> {
  return {
    middleware: await loadPeer<MiddlewareModule>('express-idempotency'),
    RedisAdapter: classOf(await loadPeer<RedisAdapterModule>('express-idempotency-redis-adapter')),
  };
}

function classOf(module: RedisAdapterModule): RedisAdapterClass {
  const exported = module.default;
  return typeof exported === 'function' ? exported : exported.default;
}

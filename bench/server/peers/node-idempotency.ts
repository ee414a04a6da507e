import { loadPeer } from './load-peer.js';

/** `@node-idempotency/core` 1.0.x, as its README uses it. */
export interface NodeIdempotencyRequest {
  readonly headers: Record<string, unknown>;
  readonly path: string;
  readonly method: string;
  readonly body?: Record<string, unknown>;
}

export interface NodeIdempotencyResponse {
  readonly body?: unknown;
  readonly error?: unknown;
  readonly additional?: Record<string, unknown>;
}

export interface NodeIdempotency {
  /** Undefined for a new request; the stored response for a completed one; throws `IdempotencyError` otherwise. */
  onRequest(request: NodeIdempotencyRequest): Promise<NodeIdempotencyResponse | undefined>;
  onResponse(request: NodeIdempotencyRequest, response: NodeIdempotencyResponse): Promise<void>;
}

/** `@node-idempotency/storage-adapter-redis`: each of these methods sends one Redis command. */
export interface NodeIdempotencyRedisStorage {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  setIfNotExists(key: string, value: string, options?: { ttl?: number }): Promise<boolean>;
  set(key: string, value: string, options: { ttl?: number }): Promise<void>;
  get(key: string): Promise<string | undefined>;
}

interface CoreModule {
  Idempotency: new (storage: NodeIdempotencyRedisStorage, options?: Record<string, unknown>) => NodeIdempotency;
  IdempotencyError: new (...args: never[]) => Error & { readonly code: string };
}

interface RedisAdapterModule {
  RedisStorageAdapter: new (options: { url: string }) => NodeIdempotencyRedisStorage;
}

export interface NodeIdempotencyPeer {
  readonly core: CoreModule;
  readonly redis: RedisAdapterModule;
}

export async function loadNodeIdempotency(): Promise<NodeIdempotencyPeer> {
  return {
    core: await loadPeer<CoreModule>('@node-idempotency/core'),
    redis: await loadPeer<RedisAdapterModule>('@node-idempotency/storage-adapter-redis'),
  };
}

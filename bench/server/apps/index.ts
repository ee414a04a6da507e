import type { AppEnv } from '../app-env.js';
import type { RunningApp } from '../running-app.js';
import { expressAtomic } from './express-atomic.js';
import { expressBare } from './express-bare.js';
import { expressIdempotency } from './express-idempotency.js';
import { fastifyAtomic } from './fastify-atomic.js';
import { fastifyBare } from './fastify-bare.js';
import { fastifyBareMemory } from './fastify-bare-memory.js';
import { fastifyBareProvider } from './fastify-bare-provider.js';
import { fastifyLeased } from './fastify-leased.js';
import { fastifyNodeIdempotency } from './fastify-node-idempotency.js';
import { fastifyPowertools } from './fastify-powertools.js';
import { serviceAtomic, serviceBare } from './service-orders.js';

/** Every server the bench can start, by name. */
export const apps = {
  'fastify-bare': fastifyBare,
  'fastify-bare-memory': fastifyBareMemory,
  'fastify-atomic': fastifyAtomic(),
  'fastify-atomic-read-first': fastifyAtomic({ readBeforeClaim: 'always' }),
  'fastify-atomic-claim-first': fastifyAtomic({ readBeforeClaim: 'never' }),
  'fastify-atomic-unnamed': fastifyAtomic({ unnamed: true }),
  'fastify-atomic-cached': fastifyAtomic({ replayCache: true }),
  'fastify-atomic-pipelined': fastifyAtomic({ pipeline: true }),
  'fastify-bare-provider': fastifyBareProvider,
  'fastify-leased': fastifyLeased,
  'fastify-node-idempotency': fastifyNodeIdempotency,
  'fastify-powertools': fastifyPowertools({ registerContext: true, validatePayload: false }),
  'fastify-powertools-no-context': fastifyPowertools({ registerContext: false, validatePayload: false }),
  'fastify-powertools-validated': fastifyPowertools({ registerContext: true, validatePayload: true }),
  'service-bare': serviceBare,
  'service-atomic': serviceAtomic,
  'express-bare': expressBare,
  'express-atomic': expressAtomic,
  'express-idempotency': expressIdempotency,
} satisfies Record<string, (env: AppEnv) => Promise<RunningApp>>;

export type AppName = keyof typeof apps;

export function isAppName(name: string): name is AppName {
  return Object.hasOwn(apps, name);
}

import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import type * as Express from '../../src/adapters/express/index.js';
import type * as Fastify from '../../src/adapters/fastify/index.js';
import type * as Core from '../../src/index.js';
import type * as Postgres from '../../src/postgres/index.js';

/** Resolves as a dependent of the package does: through its `exports`, without the sources' condition. */
const asDependent = createRequire(new URL('../../package.json', import.meta.url));

/**
 * One of retrysafe's entry points as an application loads it: the package's
 * compiled JavaScript (`npm run build`, which the bench runs first). Its
 * TypeScript sources through the loader that runs the bench would cost more
 * per request (the loader defines a name on every function it creates), a
 * cost none of the other libraries measured pays. Typed by the sources that
 * build compiles.
 */
async function entryPoint<Module>(specifier: string): Promise<Module> {
  return (await import(pathToFileURL(asDependent.resolve(specifier)).href)) as Module;
}

export const { idempotency, invalid, valid } = await entryPoint<typeof Core>('retrysafe');
export const { fromPg, portable, postgresStore } = await entryPoint<typeof Postgres>('retrysafe/postgres');
/** Whole, since the adapters name their route functions alike (`atomic`). */
export const fastifyAdapter = await entryPoint<typeof Fastify>('retrysafe/fastify');
export const expressAdapter = await entryPoint<typeof Express>('retrysafe/express');

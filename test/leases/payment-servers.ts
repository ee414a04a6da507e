import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { Controller, Module, Post } from '@nestjs/common';
import express from 'express';
import Fastify from 'fastify';
import 'reflect-metadata';
import { keepRawBody, leased as expressLeased } from '../../src/adapters/express/index.js';
import { leased as fastifyLeased } from '../../src/adapters/fastify/index.js';
import { leased as koaLeased } from '../../src/adapters/koa/index.js';
import { Idempotent, RetrysafeModule } from '../../src/adapters/nestjs/index.js';
import type { Idempotency } from '../../src/modes/idempotency.js';
import type { LeasedOperation } from '../../src/modes/leased-route.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { startKoa } from '../support/koa-app.js';
import { listen, type Listening } from '../support/listen.js';
import { nestPlatforms, startNest } from '../support/nest-apps.js';
import { leased as httpLeased } from '../support/node-http-adapter.js';
import { serveHttp } from '../support/node-http-app.js';
import type { PaymentInput } from './payment-route.js';
import { selectedFrameworks } from '../support/suites.js';

/** `POST /payments` served by a framework over real HTTP, for a leased operation; the tenant is the `x-tenant` header. */
export interface PaymentServer {
  readonly name: string;
  start(config: Idempotency<SqlClient>, operation: LeasedOperation<PaymentInput, SqlClient>): Promise<Listening>;
}

const tenantHeader = (value: string | string[] | undefined): string | undefined =>
  typeof value === 'string' ? value : undefined;

const expressServer: PaymentServer = {
  name: 'express',
  start(config, operation) {
    const app = express();
    app.post(
      '/payments',
      express.json({ verify: keepRawBody }),
      expressLeased(config, { ...operation, tenant: (req) => req.get('x-tenant') }),
    );
    return listen(createServer(app));
  },
};

const fastifyServer: PaymentServer = {
  name: 'fastify',
  async start(config, operation) {
    const app = Fastify();
    app.post(
      '/payments',
      fastifyLeased(config, { ...operation, tenant: (request) => tenantHeader(request.headers['x-tenant']) }),
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
  },
};

const koaServer: PaymentServer = {
  name: 'koa',
  start(config, operation) {
    const router = new Router();
    router.post('/payments', koaLeased(config, { ...operation, tenant: (ctx) => ctx.get('x-tenant') || undefined }));
    return startKoa(router, [], () => ({ status: 500, body: { error: 'internal' } }));
  },
};

function paymentsModule(
  config: Idempotency<SqlClient>,
  operation: LeasedOperation<PaymentInput, SqlClient>,
): new () => unknown {
  @Controller()
  class PaymentsController {
    /** The operation's handler answers: this body does not run. */
    @Post('payments')
    @Idempotent({ ...operation, mode: 'leased' })
    pay(): void {}
  }

  @Module({
    imports: [
      RetrysafeModule.forRootAsync({
        useFactory: () => ({ idempotency: config, tenant: (request) => tenantHeader(request.headers['x-tenant']) }),
      }),
    ],
    controllers: [PaymentsController],
  })
  class PaymentsModule {}
  return PaymentsModule;
}

const nestServers: readonly PaymentServer[] = nestPlatforms.map((platform) => ({
  name: platform.name,
  start: (config, operation) =>
    startNest(paymentsModule(config, operation), platform, [], () => ({ status: 500, body: { error: 'internal' } })),
}));

/** Node's own `http` server, through an adapter built from the public `retrysafe/adapter` only. */
const nodeHttpServer: PaymentServer = {
  name: 'node:http (retrysafe/adapter)',
  start(config, operation) {
    const payments = httpLeased(config, { ...operation, tenant: (req) => tenantHeader(req.headers['x-tenant']) });
    return serveHttp({ 'POST /payments': payments }, [], () => ({ status: 500, body: { error: 'internal' } }));
  },
};

export const paymentServers: readonly PaymentServer[] = selectedFrameworks([
  expressServer,
  fastifyServer,
  koaServer,
  nodeHttpServer,
  ...nestServers,
]);

import type { AddressInfo } from 'node:net';
import { type ArgumentsHost, Catch, Controller, Get, Module, Post, Put, Res } from '@nestjs/common';
import type { ExceptionFilter, INestApplication } from '@nestjs/common';
import { HttpAdapterHost, NestFactory } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import 'reflect-metadata';
import { Attempt, Idempotent, type NestHttpRequest, RetrysafeModule } from '../../src/adapters/nestjs/index.js';
import type { AtomicContext, AtomicRoute } from '../../src/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { type AdapterFactory, type AppState, contractErrors, routes } from './apps.js';

/** What a route method sets on either platform's response through `@Res({ passthrough: true })`. */
export interface PassthroughResponse {
  status(code: number): unknown;
  header(name: string, value: string | string[]): unknown;
}

type Attempted = AtomicContext<NestHttpRequest, unknown, SqlClient>;
type ContractRoute = AtomicRoute<NestHttpRequest, unknown, SqlClient>;

/** The contract app as a Nest application: its routes answer the Nest way, a body with the status and headers set on the response. */
export function appModule(config: Parameters<AdapterFactory['start']>[0], state: AppState): new () => unknown {
  // Each route is marked with the contract route's own options; in atomic mode the method runs in place of its handler, and calls it.
  const r = routes<NestHttpRequest>((request) => request.headers.authorization, state);
  const answer = async (route: ContractRoute, attempt: Attempted, res: PassthroughResponse): Promise<unknown> => {
    const { status, headers = {}, body } = await route.handler(attempt);
    res.status(status);
    for (const [name, value] of Object.entries(headers))
      res.header(name, typeof value === 'string' ? value : [...value]);
    return body;
  };

  @Controller()
  class OrdersController {
    @Post('orders')
    @Idempotent({ ...r.orders, mode: 'atomic' })
    create(@Attempt() attempt: Attempted, @Res({ passthrough: true }) res: PassthroughResponse): Promise<unknown> {
      return answer(r.orders, attempt, res);
    }

    @Post('refunds')
    @Idempotent({ ...r.refunds, mode: 'atomic' })
    refund(@Attempt() attempt: Attempted, @Res({ passthrough: true }) res: PassthroughResponse): Promise<unknown> {
      return answer(r.refunds, attempt, res);
    }

    @Post('imports')
    @Idempotent({ ...r.imports, mode: 'atomic' })
    import(@Attempt() attempt: Attempted, @Res({ passthrough: true }) res: PassthroughResponse): Promise<unknown> {
      return answer(r.imports, attempt, res);
    }

    @Get('orders')
    @Idempotent({ ...r.read, mode: 'atomic' })
    read(@Attempt() attempt: Attempted, @Res({ passthrough: true }) res: PassthroughResponse): Promise<unknown> {
      return answer(r.read, attempt, res);
    }

    @Put('orders')
    @Idempotent({ ...r.read, mode: 'atomic' })
    replace(@Attempt() attempt: Attempted, @Res({ passthrough: true }) res: PassthroughResponse): Promise<unknown> {
      return answer(r.read, attempt, res);
    }
  }

  @Module({
    imports: [
      RetrysafeModule.forRoot({
        idempotency: config,
        tenant: (request) => r.orders.tenant(request),
        authorize: (request, tenant) => r.orders.authorize?.(request, tenant) ?? true,
      }),
    ],
    controllers: [OrdersController],
  })
  class AppModule {}
  return AppModule;
}

/** What an application's error handler answers for `error`; it is also recorded there. */
export type ErrorAnswer = (error: unknown) => { readonly status: number; readonly body: unknown };

/** Nest's own answer for an `HttpException` (its status), 500 for anything else. */
export const httpStatusAnswer: ErrorAnswer = (error) => {
  const status = (error as { getStatus?: () => number }).getStatus?.() ?? 500;
  return { status, body: { error: status } };
};

/** Nest on each of its platforms. */
export const nestPlatforms = [
  { name: 'nest (express)', adapter: () => new ExpressAdapter() },
  { name: 'nest (fastify)', adapter: () => new FastifyAdapter() },
] as const;

/**
 * Starts `module` on `platform` on 127.0.0.1, with a global filter that records every error and answers as `onError` says;
 * with `rawBody: true`, as the documentation says, unless `rawBody` is false.
 */
export async function startNest(
  module: new () => unknown,
  platform: (typeof nestPlatforms)[number],
  errors: unknown[],
  onError: ErrorAnswer,
  rawBody = true,
): Promise<{ readonly url: string; close(): Promise<void> }> {
  const app: INestApplication = await NestFactory.create(module, platform.adapter(), { logger: false, rawBody });
  @Catch()
  class RecordingFilter implements ExceptionFilter {
    catch(error: unknown, host: ArgumentsHost): void {
      errors.push(error);
      const { status, body } = onError(error);
      app.get(HttpAdapterHost).httpAdapter.reply(host.switchToHttp().getResponse(), body, status);
    }
  }
  app.useGlobalFilters(new RecordingFilter());
  await app.listen(0, '127.0.0.1');
  const { port } = (app.getHttpServer() as { address(): AddressInfo }).address();
  return { url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

export const nestAdapters: readonly AdapterFactory[] = nestPlatforms.map((platform): AdapterFactory => ({
  name: platform.name,
  start: (config, state) => startNest(appModule(config, state), platform, state.errors, contractErrors),
}));

/** The contract app on each platform without `rawBody: true`: the body's text is not kept. */
export const nestAdaptersWithoutText: readonly AdapterFactory[] = nestPlatforms.map((platform): AdapterFactory => ({
  name: `${platform.name} without rawBody`,
  start: (config, state) => startNest(appModule(config, state), platform, state.errors, contractErrors, false),
}));

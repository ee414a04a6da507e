import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Body, Controller, Headers, Module, Post, Res, StreamableFile } from '@nestjs/common';
import 'reflect-metadata';
import { Idempotent, type NestHttpRequest, RetrysafeModule } from '../../src/adapters/nestjs/index.js';
import type { Idempotency } from '../../src/modes/idempotency.js';
import { nestPlatforms, type PassthroughResponse, startNest } from '../support/nest-apps.js';
import {
  type Effects,
  type Framework,
  LINKS,
  route,
  type ShopSettings,
  type ShopState,
  STREAM_CHUNKS,
  statusOf,
  takeOrder,
  tenantOf,
} from './shop.js';

/** The shop's route written the Nest way (a body, with the status and headers set on the response), made transparent. */
function shopModule(
  config: Idempotency<unknown>,
  effects: Effects,
  state: ShopState,
  settings?: ShopSettings,
): new () => unknown {
  const definition = route<NestHttpRequest>((request) => request.headers.authorization, settings);

  @Controller()
  class ShopController {
    @Post('orders')
    @Idempotent({ ...definition, mode: 'transparent' })
    async create(
      @Headers('authorization') authorization: string | undefined,
      @Headers('idempotency-key') key: string | undefined,
      @Body() body: unknown,
      @Res({ passthrough: true }) res: PassthroughResponse,
    ): Promise<unknown> {
      const outcome = await takeOrder(effects, state, tenantOf(authorization) ?? '', key ?? '', body);
      if (outcome.kind === 'thrown') throw outcome.error;
      if (outcome.kind === 'failed') {
        res.status(outcome.status);
        return { error: 'upstream failed' };
      }
      res.status(201);
      res.header('location', `/orders/${outcome.order.id}`);
      res.header('set-cookie', 'session=secret; Path=/');
      res.header('x-debug', '1');
      res.header('link', [...LINKS]);
      if (outcome.kind === 'created') return outcome.order;
      res.header('content-type', 'text/plain; charset=utf-8');
      return new StreamableFile(
        Readable.from(
          (async function* chunks() {
            for (const chunk of STREAM_CHUNKS) {
              yield chunk;
              await nextTurn();
            }
          })(),
        ),
      );
    }
  }

  @Module({
    imports: [RetrysafeModule.forRoot({ idempotency: config, tenant: (request) => definition.tenant(request) })],
    controllers: [ShopController],
  })
  class ShopModule {}
  return ShopModule;
}

export const nestShops: readonly Framework[] = nestPlatforms.map((platform) => ({
  name: platform.name,
  start: (config, effects, state, settings) =>
    startNest(shopModule(config, effects, state, settings), platform, state.errors, (error) => ({
      status: statusOf(error),
      body: { error: 'handled' },
    })),
}));

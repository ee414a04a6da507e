import { createServer } from 'node:http';
import { bodyParser } from '@koa/bodyparser';
import type Router from '@koa/router';
import Koa from 'koa';
import { keepRawBody } from '../../src/adapters/koa/index.js';
import { listen, type Listening } from './listen.js';
import type { ErrorAnswer } from './nest-apps.js';

/** Serves `router` behind a JSON body parser that keeps the body's bytes (`keepRawBody`), with a first middleware that records every error and answers as `onError` says. */
export function startKoa(router: Router, errors: unknown[], onError: ErrorAnswer): Promise<Listening> {
  const app = new Koa();
  app.use(async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      errors.push(error);
      const { status, body } = onError(error);
      ctx.status = status;
      ctx.body = body;
    }
  });
  app.use(keepRawBody);
  app.use(bodyParser());
  app.use(router.routes());
  const callback = app.callback();
  return listen(createServer((req, res) => void callback(req, res)));
}

import type { FastifyInstance } from 'fastify';
import type { SqlClient, SqlDatabase } from 'retrysafe/postgres';
import { orderProblem } from './problem.js';
import { respond } from './respond.js';
import type { SchemaReadiness } from '../data/schema-readiness.js';

/** How long /healthz waits for `SELECT 1`: a stalled database is unhealthy, not a hung probe. */
export const HEALTH_CHECK_TIMEOUT_MS = 1_000;

type CheckResult = 'ok' | 'failed' | 'timed-out' | 'pending';

/** `GET /healthz`: 200 when the database answers in time and the schema is prepared; 503 naming the failed check otherwise. */
export function healthRoute(
  app: FastifyInstance,
  options: { readonly database: SqlDatabase<SqlClient>; readonly schema: SchemaReadiness },
): void {
  app.get('/healthz', async (request, reply) => {
    const database = await checkDatabase(options.database, (error) =>
      request.log.error({ err: error }, 'health check failed'),
    );
    const checks = { database, schema: options.schema.ready ? 'ok' : 'pending' } as const;
    if (database === 'ok' && checks.schema === 'ok')
      return respond(reply, { status: 200, body: { status: 'ok', checks } });
    const failed = Object.entries(checks)
      .filter(([, result]) => result !== 'ok')
      .map(([name, result]) => `${name}: ${result}`);
    return respond(
      reply,
      orderProblem('database-unavailable', `Health checks failed (${failed.join(', ')}).`, {
        headers: { 'retry-after': '1' },
        members: { checks },
      }),
    );
  });
}

async function checkDatabase(
  database: SqlDatabase<SqlClient>,
  onError: (error: unknown) => void,
): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve('timed-out'), HEALTH_CHECK_TIMEOUT_MS);
  });
  const answered = database.query('SELECT 1').then(
    (): CheckResult => 'ok',
    (error: unknown): CheckResult => {
      onError(error);
      return 'failed';
    },
  );
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}

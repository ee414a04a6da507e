import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CliDatabase, openCliDatabase } from './cli-database.js';
import { actionsOn } from './operator-actions.js';
import { expectOneLineError, retrysafe } from './run-cli.js';

interface Listed {
  readonly items: readonly {
    readonly id: string;
    readonly topic: string;
    readonly parkedAt: string;
    readonly version: string;
  }[];
  readonly next: string | null;
}

const FIRST = '00000000-0000-4000-8000-000000000001';
const SECOND = '00000000-0000-4000-8000-000000000002';
const THIRD = '00000000-0000-4000-8000-000000000003';

/** `retrysafe dead-letters` and `retrysafe requeue`: an outbox dead letter sent again only as it was listed. */
describe('retrysafe dead-letters and requeue', () => {
  let db: CliDatabase;
  beforeAll(async () => {
    db = await openCliDatabase();
    // Parked a minute apart, the first the longest ago.
    await db.database.query(
      `INSERT INTO retrysafe_outbox (id, topic, payload, state, attempts, last_error, parked_at)
       SELECT id::uuid, 'orders.created', '{}', 'dead', 8, 'broker refused: 503', now() - make_interval(mins => 10 - n::int)
       FROM unnest($1::text[]) WITH ORDINALITY AS t(id, n)`,
      [[FIRST, SECOND, THIRD]],
    );
  });
  afterAll(() => db.close());

  const message = async (id: string) =>
    (
      await db.database.query<{ state: string; attempts: number }>(
        'SELECT state, attempts FROM retrysafe_outbox WHERE id = $1',
        [id],
      )
    ).rows[0];
  const list = async (...flags: string[]): Promise<Listed> => {
    const run = await retrysafe(['dead-letters', '--json', ...flags, '--database-url', db.url]);
    expect(run.code).toBe(0);
    return JSON.parse(run.stdout) as Listed;
  };

  it('lists the dead letters most recent first, a page at a time, each with its version', async () => {
    const first = await list('--limit', '2');
    expect(first.items.map((item) => item.id)).toEqual([THIRD, SECOND]);
    const [latest] = first.items;
    expect(latest).toMatchObject({ id: THIRD, topic: 'orders.created', attempts: 8, lastError: 'broker refused: 503' });
    expect(Object.keys(latest ?? {})).toEqual([
      'id',
      'topic',
      'attempts',
      'lastError',
      'createdAt',
      'parkedAt',
      'version',
    ]);
    expect(latest?.version).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    expect(new Date(latest?.parkedAt ?? '').toISOString()).toBe(latest?.version.replace(/\d{3}Z$/, 'Z'));
    expect(first.next).toEqual(expect.any(String));
    const second = await list('--limit', '2', '--cursor', first.next ?? '');
    expect(second).toEqual({ items: [expect.objectContaining({ id: FIRST })], next: null });

    const text = await retrysafe(['dead-letters', '--limit', '1', '--database-url', db.url]);
    expect(text.code).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(
        `^${THIRD}  orders\\.created  8 attempts  version ${first.items[0]?.version ?? ''}  broker refused: 503\\nMore: --cursor \\S+\\n$`,
      ),
    );
  });

  it('requeues one by its version with who and why, and refuses it again (exit 1)', async () => {
    const version = (await list()).items.find((item) => item.id === SECOND)?.version ?? '';
    const args = ['requeue', SECOND, '--version', version, '--reason', 'broker back (OPS-8)', '--database-url', db.url];

    const requeued = await retrysafe([...args, '--actor', 'ops@example.com']);
    expect(requeued.code).toBe(0);
    expect(requeued.stdout).toBe(`Requeued ${SECOND}: the relay sends it again under the same id.\n`);
    expect(await message(SECOND)).toEqual({ state: 'pending', attempts: 0 });
    expect(await message(FIRST)).toEqual({ state: 'dead', attempts: 8 });
    expect(await actionsOn(db, SECOND)).toEqual([
      {
        actor: 'ops@example.com',
        action: 'requeue',
        tenant: null,
        operation: null,
        key: null,
        message_id: SECOND,
        reason: 'broker back (OPS-8)',
        seen: { parkedAt: version },
        detail: {},
      },
    ]);

    const again = await retrysafe([...args, '--json']);
    expect(again.code).toBe(1);
    expect(expectOneLineError(again)).toBe(
      `retrysafe requeue: dead letter ${SECOND} is not parked at version ${version}: it was requeued, parked again or is no dead letter; nothing was changed.`,
    );
    expect(await actionsOn(db, SECOND)).toHaveLength(1);
  });

  it('refuses another version, an unknown message (1) and a malformed version (2), changing nothing', async () => {
    const version = (await list()).items.find((item) => item.id === FIRST)?.version ?? '';
    const other = version.replace(
      /\d{6}Z$/,
      (micros) => `${String((Number(micros.slice(0, 6)) + 1) % 1e6).padStart(6, '0')}Z`,
    );
    const requeue = (id: string, seen: string) =>
      retrysafe(['requeue', id, '--version', seen, '--reason', 'x', '--json', '--database-url', db.url]);
    const runs = await Promise.all([
      requeue(FIRST, other),
      requeue('00000000-0000-4000-8000-00000000000f', version),
      requeue('not-a-uuid', version),
      requeue(FIRST, 'yesterday'),
    ]);
    expect(runs.map((run) => run.code)).toEqual([1, 1, 1, 2]);
    expect(runs.map(expectOneLineError)).toEqual([
      expect.stringContaining(`retrysafe requeue: dead letter ${FIRST} is not parked at version ${other}`),
      expect.stringContaining('retrysafe requeue: dead letter 00000000-0000-4000-8000-00000000000f is not parked'),
      expect.stringContaining('retrysafe requeue: dead letter not-a-uuid is not parked'),
      expect.stringMatching(/^error: option '--version <version>' argument 'yesterday' is invalid/),
    ]);
    expect(await message(FIRST)).toEqual({ state: 'dead', attempts: 8 });
    expect(await actionsOn(db, FIRST)).toEqual([]);
  });
});

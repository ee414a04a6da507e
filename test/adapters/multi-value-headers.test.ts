import { describe, expect, it } from 'vitest';
import type { Received } from '../support/http.js';
import { adapters, MANY_LINES } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { newKey, useApp, useEngine } from './harness.js';

const linesOf = (res: Received, name: string): string[] =>
  res.lines.filter(([line]) => line === name).map(([, value]) => value);

/** Node's own response writes a list as that many lines; a web `Response` joins every header but Set-Cookie, as the Fetch standard says. */
const WEB_RESPONSE = new Set(['fetch (Hono)']);

/**
 * A header sent on several lines (`Link`, `Vary`) is stored as a list and
 * replayed line for line, in order, as the first answer sent it. The check
 * is made on the stored record: one engine is enough.
 */
describe.each(engines.slice(0, 1))('headers on several lines on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter, { policy: { storedHeaders: ['content-type', 'location', 'link', 'vary'] } });

    it('replays Link and Vary line for line and in order, and never Set-Cookie', async () => {
      const key = newKey();
      const first = await t.post({ key, body: { sku: 'LINES' } });
      expect(first.status).toBe(201);
      expect(linesOf(first, 'set-cookie')).toEqual(MANY_LINES['set-cookie']);
      if (!WEB_RESPONSE.has(adapter.name)) {
        expect(linesOf(first, 'link')).toEqual(MANY_LINES.link);
        expect(linesOf(first, 'vary')).toEqual(MANY_LINES.vary);
      }
      expect(linesOf(first, 'link').join(', ')).toBe(MANY_LINES.link.join(', '));

      const { rows } = await t.database.query<{ response_headers: Record<string, unknown> }>(
        'SELECT response_headers FROM retrysafe_operations WHERE key = $1',
        [key],
      );
      expect(rows[0]?.response_headers).toMatchObject({ link: MANY_LINES.link, vary: MANY_LINES.vary });

      const replay = await t.post({ key, body: { sku: 'LINES' } });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(linesOf(replay, 'link')).toEqual(linesOf(first, 'link'));
      expect(linesOf(replay, 'vary')).toEqual(linesOf(first, 'vary'));
      expect(linesOf(replay, 'set-cookie')).toEqual([]);
      expect(t.calls()).toBe(1);
    });

    it('replays a record stored before lists were kept, whose values are strings', async () => {
      const key = newKey();
      expect((await t.post({ key, body: { sku: 'LINES' } })).status).toBe(201);
      await t.database.query(
        `UPDATE retrysafe_operations SET response_headers = jsonb_set(response_headers, '{link}', to_jsonb('</orders/1>; rel="self", </orders>; rel="collection"'::text)) WHERE key = $1`,
        [key],
      );
      const replay = await t.post({ key, body: { sku: 'LINES' } });
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(linesOf(replay, 'link')).toEqual(['</orders/1>; rel="self", </orders>; rel="collection"']);
    });
  });
});

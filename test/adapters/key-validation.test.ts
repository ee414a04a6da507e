import { describe, expect, it } from 'vitest';
import { adapters } from '../support/apps.js';
import { engines } from '../support/engines.js';
import { latin1 } from '../support/http.js';
import { expectProblem, expectReplayOf, newKey, useApp, useEngine } from './harness.js';

const body = { sku: 'A', qty: 1 };

describe.each(engines)('Idempotency-Key validation on $name', (engine) => {
  const ref = useEngine(engine);

  describe.each(adapters)('through $name', (adapter) => {
    const t = useApp(ref, adapter);

    async function expectRefused(
      request: Parameters<typeof t.post>[0],
      code: 'idempotency-key-missing' | 'idempotency-key-invalid',
    ): Promise<void> {
      const res = await t.post(request);
      expectProblem(res, code, 400);
      expect(t.calls()).toBe(0);
      expect(await t.orders()).toBe(0);
      expect(await t.records()).toBe(0);
    }

    it('refuses a POST without a key: 400 idempotency-key-missing, the handler does not run, no row', async () => {
      await expectRefused({ body }, 'idempotency-key-missing');
    });

    it('refuses an empty key', async () => {
      await expectRefused({ key: '', body }, 'idempotency-key-invalid');
    });

    it('refuses a key of 256 bytes and accepts one of 255', async () => {
      await expectRefused({ key: 'k'.repeat(256), body }, 'idempotency-key-invalid');
      const accepted = await t.post({ key: 'k'.repeat(255), body });
      expect(accepted.status).toBe(201);
      expect(t.calls()).toBe(1);
      expect(await t.record('k'.repeat(255))).toMatchObject({ state: 'completed' });
    });

    it('refuses a key sent as raw non-ASCII bytes (UTF-8 "clé"), bare or quoted', async () => {
      await expectRefused({ rawHeaders: [['Idempotency-Key', latin1('clé')]], body }, 'idempotency-key-invalid');
      await expectRefused({ rawHeaders: [['Idempotency-Key', latin1('"clé"')]], body }, 'idempotency-key-invalid');
    });

    it('refuses a key holding a control character (tab)', async () => {
      await expectRefused({ key: 'ab\tcd', body }, 'idempotency-key-invalid');
    });

    it('refuses a key holding a space', async () => {
      await expectRefused({ key: 'ab cd', body }, 'idempotency-key-invalid');
    });

    it('refuses a key sent on two header lines, even twice the same', async () => {
      await expectRefused(
        {
          rawHeaders: [
            ['Idempotency-Key', 'a'],
            ['Idempotency-Key', 'b'],
          ],
          body,
        },
        'idempotency-key-invalid',
      );
      await expectRefused(
        {
          rawHeaders: [
            ['Idempotency-Key', 'a'],
            ['Idempotency-Key', 'a'],
          ],
          body,
        },
        'idempotency-key-invalid',
      );
      await expectRefused(
        {
          rawHeaders: [
            ['Idempotency-Key', '"a"'],
            ['Idempotency-Key', '"a"'],
          ],
          body,
        },
        'idempotency-key-invalid',
      );
    });

    it('refuses two keys on one line, quoted or bare', async () => {
      await expectRefused({ key: '"a", "b"', body }, 'idempotency-key-invalid');
      await expectRefused({ key: 'a, b', body }, 'idempotency-key-invalid');
    });

    it('refuses a quoted key that is not a valid structured-field string', async () => {
      await expectRefused({ key: '"abc', body }, 'idempotency-key-invalid');
    });

    it('treats the RFC 9651 string "abc" and the bare token abc as one key', async () => {
      const key = newKey();
      const quoted = await t.post({ key: `"${key}"`, body });
      expect(quoted.status).toBe(201);
      const bare = await t.post({ key, body });
      expectReplayOf(bare, quoted);
      expect(t.calls()).toBe(1);
      expect(await t.orders()).toBe(1);
      expect(await t.record(key)).toMatchObject({ state: 'completed', response_status: 201 });
    });
  });
});

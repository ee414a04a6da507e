import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { isRetrysafeError } from '../../src/core/errors.js';
import { signWebhook, verifyWebhook, webhookSignatureHeader } from '../../src/webhooks/index.js';

const secret = () => `whsec_${randomBytes(24).toString('base64')}`;
const now = Math.floor(Date.now() / 1000);
const body = '{"type":"payment.succeeded","data":{"amount":1299,"note":"caf\u00e9"}}';

function headers(id: string, timestamp: number, signature: string): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': signature };
}

describe('Standard Webhooks signatures', () => {
  it('signs as the reference implementation does, and verifies what it signs', () => {
    const key = secret();
    const reference = new Webhook(key);
    const signature = signWebhook(key, 'msg_1', now, body);
    expect(signature).toBe(reference.sign('msg_1', new Date(now * 1000), body));
    expect(() => reference.verify(body, headers('msg_1', now, signature))).not.toThrow();
    expect(
      verifyWebhook({ secrets: key }, headers('msg_1', now, reference.sign('msg_1', new Date(now * 1000), body)), body),
    ).toEqual({ ok: true, id: 'msg_1', timestamp: now });
  });

  it('verifies the raw bytes, so any change to the body, the id or the timestamp fails', () => {
    const key = secret();
    const bytes = Buffer.from(body, 'utf8');
    const signature = signWebhook(key, 'msg_1', now, bytes);
    expect(verifyWebhook({ secrets: key }, headers('msg_1', now, signature), bytes).ok).toBe(true);
    const reformatted = JSON.stringify(JSON.parse(body), null, 2);
    expect(verifyWebhook({ secrets: key }, headers('msg_1', now, signature), reformatted)).toEqual({
      ok: false,
      reason: 'no-matching-signature',
    });
    expect(verifyWebhook({ secrets: key }, headers('msg_2', now, signature), bytes)).toEqual({
      ok: false,
      reason: 'no-matching-signature',
    });
    expect(verifyWebhook({ secrets: key }, headers('msg_1', now - 1, signature), bytes)).toEqual({
      ok: false,
      reason: 'no-matching-signature',
    });
    expect(verifyWebhook({ secrets: secret() }, headers('msg_1', now, signature), bytes)).toEqual({
      ok: false,
      reason: 'no-matching-signature',
    });
  });

  it('accepts any matching signature among several, on either side of a secret rotation', () => {
    const [old, next] = [secret(), secret()];
    const both = webhookSignatureHeader([old, next], 'msg_1', now, body);
    expect(both.split(' ')).toHaveLength(2);
    expect(verifyWebhook({ secrets: old }, headers('msg_1', now, both), body).ok).toBe(true);
    expect(verifyWebhook({ secrets: next }, headers('msg_1', now, both), body).ok).toBe(true);
    const onlyNext = signWebhook(next, 'msg_1', now, body);
    expect(verifyWebhook({ secrets: [old, next] }, headers('msg_1', now, onlyNext), body).ok).toBe(true);
    expect(
      verifyWebhook(
        { secrets: [old, next] },
        headers('msg_1', now, `v1a,${onlyNext.slice(3)} v1,${'A'.repeat(44)}`),
        body,
      ).ok,
    ).toBe(false);
  });

  it('refuses timestamps outside the tolerance, either way, and accepts them at its edge', () => {
    const key = secret();
    const at = (timestamp: number, toleranceSeconds?: number) =>
      verifyWebhook(
        { secrets: key, nowSeconds: now, toleranceSeconds },
        headers('msg_1', timestamp, signWebhook(key, 'msg_1', timestamp, body)),
        body,
      );
    expect(at(now - 300).ok).toBe(true);
    expect(at(now + 300).ok).toBe(true);
    expect(at(now - 301)).toEqual({ ok: false, reason: 'outside-tolerance' });
    expect(at(now + 301)).toEqual({ ok: false, reason: 'outside-tolerance' });
    expect(at(now - 30, 10)).toEqual({ ok: false, reason: 'outside-tolerance' });
  });

  it('refuses a delivery with a header missing or a timestamp that is not whole seconds', () => {
    const key = secret();
    const signature = signWebhook(key, 'msg_1', now, body);
    const { 'webhook-signature': _signature, ...unsigned } = headers('msg_1', now, signature);
    expect(verifyWebhook({ secrets: key }, unsigned, body)).toEqual({ ok: false, reason: 'missing-header' });
    expect(verifyWebhook({ secrets: key }, { ...headers('', now, signature) }, body)).toEqual({
      ok: false,
      reason: 'missing-header',
    });
    expect(
      verifyWebhook({ secrets: key }, { ...headers('msg_1', now, signature), 'webhook-timestamp': `${now}.5` }, body),
    ).toEqual({ ok: false, reason: 'invalid-timestamp' });
    expect(
      verifyWebhook({ secrets: key }, { ...headers('msg_1', now, signature), 'webhook-timestamp': '' }, body),
    ).toEqual({ ok: false, reason: 'invalid-timestamp' });
  });

  it('reads a Fetch Headers object and a repeated signature header', () => {
    const [old, next] = [secret(), secret()];
    const fetchHeaders = new Headers(headers('msg_1', now, signWebhook(old, 'msg_1', now, body)));
    expect(verifyWebhook({ secrets: old }, fetchHeaders, body).ok).toBe(true);
    const repeated = {
      ...headers('msg_1', now, ''),
      'webhook-signature': [signWebhook(old, 'msg_1', now, body), signWebhook(next, 'msg_1', now, body)],
    };
    expect(verifyWebhook({ secrets: next }, repeated, body).ok).toBe(true);
  });

  it('refuses a secret without a key, as a misuse', () => {
    const misuse = (error: unknown) => isRetrysafeError(error, 'misuse');
    expect(thrown(() => signWebhook('whsec_', 'msg_1', now, body))).toSatisfy(misuse);
    expect(thrown(() => verifyWebhook({ secrets: 'whsec_' }, headers('msg_1', now, 'v1,x'), body))).toSatisfy(misuse);
  });
});

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  return undefined;
}

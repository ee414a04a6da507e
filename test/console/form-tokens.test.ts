import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { OperationIdentity } from '../../src/core/identity.js';
import { insertRecord } from '../retention/records.js';
import { engines } from '../support/engines.js';
import { actionForm, OPERATOR, submit, useConsole } from './console-http.js';

/**
 * The anti-forgery token of the console's forms: a token the console did not
 * draw is refused with 403 whatever it holds, and nothing is done.
 */
const FORGED = 'This form was not drawn by this console for you';

describe.each(engines)('the console’s form tokens on $name', (factory) => {
  const ref = useConsole(factory);

  async function unknownOperation(): Promise<{ identity: OperationIdentity; url: string }> {
    const identity = { tenant: 'tenant-a', operation: 'orders.create@1', key: `token-${randomUUID()}` };
    await insertRecord(ref.engine.database, { ...identity, state: 'unknown', mode: 'leased', reason: 'no answer' });
    return { identity, url: `${ref.base}/operation?${new URLSearchParams({ ...identity }).toString()}` };
  }

  const stateOf = async (identity: OperationIdentity) =>
    (
      await ref.engine.database.query<{ state: string }>('SELECT state FROM retrysafe_operations WHERE key = $1', [
        identity.key,
      ])
    ).rows[0]?.state;

  it('refuses a token of the right length holding a character of several bytes with 403, not 500', async () => {
    const { identity, url } = await unknownOperation();
    const form = await actionForm(url, 'purge', OPERATOR);
    const token = form.fields.get('csrf') ?? '';
    expect(token).not.toBe('');
    const forged = `é${token.slice(1)}`;
    expect(forged).toHaveLength(token.length);
    const answer = await submit(form, { csrf: forged, reason: 'forged', confirmed: 'yes' }, OPERATOR);
    expect(answer.status, answer.bodyBytes.toString()).toBe(403);
    expect(answer.bodyBytes.toString()).toContain(FORGED);
    expect(await stateOf(identity)).toBe('unknown');
  });
});

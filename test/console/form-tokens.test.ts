import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { OperationIdentity } from '../../src/core/identity.js';
import { insertRecord } from '../retention/records.js';
import { engines } from '../support/engines.js';
import { send } from '../support/http.js';
import { actionForm, drawn, OPERATOR, postForms, submit, useConsole } from './console-http.js';

/**
 * The anti-forgery token of the console's forms and the session it is bound
 * to: a token the console did not draw, drawn in another session, or drawn in
 * a session that has ended is refused with 403, and nothing is done. And the
 * console answers only for the host names it is given.
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

  it('gives an operator a session cookie the page cannot read and other sites do not send', async () => {
    const { url } = await unknownOperation();
    const page = await send('GET', url, { headers: OPERATOR });
    expect(page.headers['set-cookie']).toEqual([
      expect.stringMatching(
        /^retrysafe-console-session=[\w.-]+; Path=\/ops; Max-Age=28800; HttpOnly; SameSite=Strict$/,
      ) as unknown,
    ]);
    // A page drawn in that session keeps it.
    const cookie = page.headers['set-cookie']?.[0]?.split(';')[0] ?? '';
    const again = await send('GET', url, { headers: { ...OPERATOR, cookie } });
    expect(again.headers['set-cookie']).toBeUndefined();
    // A reader who may not act gets no session, as they get no form.
    expect((await send('GET', url, { headers: { 'x-user': 'viewer' } })).headers['set-cookie']).toBeUndefined();
  });

  it('refuses the token of one session posted in another, and changes nothing', async () => {
    const { identity, url } = await unknownOperation();
    const mine = await actionForm(url, 'purge', OPERATOR);
    const theirs = await actionForm(url, 'purge', OPERATOR);
    expect(theirs.cookie).not.toBe(mine.cookie);
    expect(theirs.fields.get('csrf')).not.toBe(mine.fields.get('csrf'));
    const crossed = await submit(
      { ...mine, ...(theirs.cookie === undefined ? {} : { cookie: theirs.cookie }) },
      { reason: 'crossed', confirmed: 'yes' },
      OPERATOR,
    );
    expect(crossed.status, crossed.bodyBytes.toString()).toBe(403);
    expect(crossed.bodyBytes.toString()).toContain(FORGED);
    // Without any session cookie: refused too.
    const { cookie: _dropped, ...bare } = mine;
    expect((await submit(bare, { reason: 'no session', confirmed: 'yes' }, OPERATOR)).status).toBe(403);
    expect(await stateOf(identity)).toBe('unknown');
  });

  it('refuses a form of a session that has ended (8 hours by default), and the next page opens a new one', async () => {
    let clock = Date.parse('2026-03-02T09:00:00Z');
    const base = await ref.serve({ now: () => clock });
    const { identity } = await unknownOperation();
    const url = `${base}/operation?${new URLSearchParams({ ...identity }).toString()}`;
    const form = await actionForm(url, 'purge', OPERATOR);
    clock += 8 * 3600 * 1000 - 1000;
    const before = await submit(form, { reason: 'late in the day' }, OPERATOR);
    expect(before.status, before.bodyBytes.toString()).toBe(200);
    clock += 1000;
    const ended = await submit(form, { reason: 'too late', confirmed: 'yes' }, OPERATOR);
    expect(ended.status, ended.bodyBytes.toString()).toBe(403);
    expect(ended.bodyBytes.toString()).toContain('or your session ended: reload the page');
    expect(await stateOf(identity)).toBe('unknown');
    // Reloading the page draws it in a new session, whose form goes through.
    const { page, cookie } = await drawn(url, {
      ...OPERATOR,
      ...(form.cookie === undefined ? {} : { cookie: form.cookie }),
    });
    expect(cookie).not.toBe(form.cookie);
    const [fresh] = postForms(page, url, cookie).filter((one) => one.action.endsWith('/actions/purge'));
    if (fresh === undefined) throw new Error('the page has no purge form');
    const done = await submit(fresh, { reason: 'reloaded', confirmed: 'yes' }, OPERATOR);
    expect(done.status, done.bodyBytes.toString()).toBe(303);
    expect(await stateOf(identity)).toBeUndefined();
  });

  it('answers only for the host names allowedHosts lists, on any port or the one given, before reading anything', async () => {
    const { identity } = await unknownOperation();
    const base = await ref.serve({ allowedHosts: ['ops.example', 'Admin.Example:8443'] });
    const url = `${base}/operation?${new URLSearchParams({ ...identity }).toString()}`;
    const port = new URL(base).port;
    const status = async (host: string) => (await send('GET', url, { headers: { ...OPERATOR, host } })).status;
    expect(await status(`ops.example:${port}`)).toBe(200);
    expect(await status('OPS.example')).toBe(200);
    expect(await status('admin.example:8443')).toBe(200);
    expect(await status('admin.example:8444')).toBe(421);
    expect(await status(`evil.example:${port}`)).toBe(421);
    // The loopback names are the default only: a list replaces them.
    expect(await status(`127.0.0.1:${port}`)).toBe(421);
    expect(await status(`ops.example.evil.example:${port}`)).toBe(421);
  });
});

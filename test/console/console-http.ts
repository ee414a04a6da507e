import { createServer } from 'node:http';
import { afterAll, beforeAll, beforeEach, expect } from 'vitest';
import {
  type ActionConfig,
  type ConsoleAccess,
  consoleNode,
  type ConsoleSettings,
  type ConsoleStores,
} from '../../src/console/index.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import type { Engine, EngineFactory } from '../support/engines.js';
import { type Received, send } from '../support/http.js';
import { type Listening, listen } from '../support/listen.js';

/**
 * The console over real HTTP as a browser uses it: a page is drawn, one of
 * its forms is filled in and posted, and the confirmation page's form is
 * posted in turn, every field as the page wrote it.
 */

/**
 * A form of a page: where it posts and what it sends, the fields the operator
 * fills included (empty until filled), and the session cookie the browser
 * holds for the page's console, sent with the form as a browser does.
 */
export interface DrawnForm {
  readonly action: string;
  readonly fields: URLSearchParams;
  readonly cookie?: string;
}

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" };
const unescape = (text: string) => text.replace(/&(amp|lt|gt|quot|#39);/g, (_, name: string) => ENTITIES[name] ?? '');

function attributes(tag: string): Map<string, string> {
  return new Map([...tag.matchAll(/([\w-]+)="([^"]*)"/g)].map(([, name = '', value = '']) => [name, unescape(value)]));
}

/** The POST forms of `page` drawn at `url`, with what each would send: a form without an action posts to its page. */
export function postForms(page: string, url: string, cookie?: string): DrawnForm[] {
  return [...page.matchAll(/<form\b([^>]*)>([\s\S]*?)<\/form>/g)].flatMap(([, open = '', inner = '']) => {
    const form = attributes(open);
    if (form.get('method') !== 'post') return [];
    const fields = new URLSearchParams();
    for (const [, tag = ''] of inner.matchAll(/<input\b([^>]*)>/g)) {
      const input = attributes(tag);
      const name = input.get('name');
      if (name !== undefined) fields.append(name, input.get('value') ?? '');
    }
    for (const [, tag = '', text = ''] of inner.matchAll(/<textarea\b([^>]*)>([\s\S]*?)<\/textarea>/g)) {
      const name = attributes(tag).get('name');
      if (name !== undefined) fields.append(name, unescape(text));
    }
    for (const [, tag = '', options = ''] of inner.matchAll(/<select\b([^>]*)>([\s\S]*?)<\/select>/g)) {
      const name = attributes(tag).get('name');
      const values = [...options.matchAll(/<option\b([^>]*)>/g)].map(([, option = '']) => attributes(option));
      const chosen = values.find((option) => option.has('selected')) ?? values[0];
      if (name !== undefined) fields.append(name, chosen?.get('value') ?? '');
    }
    return [
      { action: new URL(form.get('action') ?? url, url).href, fields, ...(cookie === undefined ? {} : { cookie }) },
    ];
  });
}

/** What a browser sends with a form posted from the console's own page. */
export function formHeaders(url: string, headers: Readonly<Record<string, string>>): Record<string, string> {
  return {
    ...headers,
    'content-type': 'application/x-www-form-urlencoded',
    origin: new URL(url).origin,
    'sec-fetch-site': 'same-origin',
  };
}

/** A page a user reads, expected to be there. */
export async function drawPage(url: string, headers: Readonly<Record<string, string>>): Promise<string> {
  return (await drawn(url, headers)).page;
}

/** A page a user reads, and the session cookie their browser holds after it: the one it set, else the one sent. */
export async function drawn(
  url: string,
  headers: Readonly<Record<string, string>>,
): Promise<{ readonly page: string; readonly cookie?: string }> {
  const answer = await send('GET', url, { headers });
  expect(answer.status, answer.bodyBytes.toString()).toBe(200);
  const cookie = answer.headers['set-cookie']?.[0]?.split(';')[0] ?? headers.cookie;
  return { page: answer.bodyBytes.toString(), ...(cookie === undefined ? {} : { cookie }) };
}

/**
 * `form` confirmed and posted as a page of a site that pointed its own name
 * `host` at the console's address would post it (DNS rebinding): under that
 * name and from its origin, which the browser calls the same origin.
 */
export function postRebound(
  form: DrawnForm,
  host: string,
  headers: Readonly<Record<string, string>>,
): Promise<Received> {
  const fields = new URLSearchParams(form.fields);
  fields.set('reason', 'rebound');
  fields.set('confirmed', 'yes');
  const cookie: Record<string, string> = form.cookie === undefined ? {} : { cookie: form.cookie };
  return send('POST', form.action, {
    headers: { ...formHeaders(`http://${host}/`, { ...cookie, ...headers }), host },
    body: fields.toString(),
  });
}

/** `form` posted with `filled` filled in (replacing what the page wrote). */
export function submit(
  form: DrawnForm,
  filled: Readonly<Record<string, string>>,
  headers: Readonly<Record<string, string>>,
): Promise<Received> {
  const fields = new URLSearchParams(form.fields);
  for (const [name, value] of Object.entries(filled)) fields.set(name, value);
  const cookie: Record<string, string> = form.cookie === undefined ? {} : { cookie: form.cookie };
  return send('POST', form.action, {
    headers: formHeaders(form.action, { ...cookie, ...headers }),
    body: fields.toString(),
  });
}

/** The one form of the page at `url` that posts to the action `name` and whose hidden fields include `match`. */
export async function actionForm(
  url: string,
  name: string,
  headers: Readonly<Record<string, string>>,
  match: Readonly<Record<string, string>> = {},
): Promise<DrawnForm> {
  const { page, cookie } = await drawn(url, headers);
  const found = postForms(page, url, cookie).filter(
    (form) =>
      new URL(form.action).pathname.endsWith(`/actions/${name}`) &&
      Object.entries(match).every(([field, value]) => form.fields.get(field) === value),
  );
  expect(found, `the ${name} forms of ${url}`).toHaveLength(1);
  return found[0] as DrawnForm;
}

/** Posts `form` filled in, and answers the confirmation page it leads to: the form to confirm with. */
export async function askToConfirm(
  form: DrawnForm,
  filled: Readonly<Record<string, string>>,
  headers: Readonly<Record<string, string>>,
): Promise<DrawnForm> {
  const asked = await submit(form, filled, headers);
  const page = asked.bodyBytes.toString();
  expect(asked.status, page).toBe(200);
  expect(page).toContain('<h1>Confirm: ');
  const [confirm, ...more] = postForms(page, form.action, form.cookie);
  expect(more).toEqual([]);
  if (confirm === undefined) throw new Error('the confirmation page has no form');
  expect(confirm.fields.get('confirmed')).toBe('yes');
  return confirm;
}

/** An action up to its confirmation: the form filled in on the page at `url` and posted; the confirmation's form, not posted yet. */
export async function confirmation(
  url: string,
  name: string,
  filled: Readonly<Record<string, string>>,
  headers: Readonly<Record<string, string>>,
  match: Readonly<Record<string, string>> = {},
): Promise<DrawnForm> {
  return askToConfirm(await actionForm(url, name, headers, match), filled, headers);
}

/** A whole action as an operator does it: the form filled in on its page, posted, then confirmed. */
export async function act(
  url: string,
  name: string,
  filled: Readonly<Record<string, string>>,
  headers: Readonly<Record<string, string>>,
  match: Readonly<Record<string, string>> = {},
): Promise<Received> {
  return submit(await confirmation(url, name, filled, headers, match), {}, headers);
}

/** A redirect after an action, followed as a browser does: where it led and the page there. */
export async function followed(
  answer: Received,
  from: string,
  headers: Readonly<Record<string, string>>,
): Promise<{ readonly location: string; readonly page: string }> {
  expect(answer.status, answer.bodyBytes.toString()).toBe(303);
  const location = answer.headers.location ?? '';
  return { location, page: await drawPage(new URL(location, from).href, headers) };
}

/** The operator the consoles below let act, and a colleague they let read only. */
export const OPERATOR = { 'x-user': 'ops' } as const;
export const VIEWER = { 'x-user': 'viewer' } as const;

/** The application's own decision: its operator reads and acts, its viewer reads, anyone else sees nothing. */
export function access(user: string | readonly string[] | null | undefined): ConsoleAccess {
  if (user === 'ops') return { read: true, act: true, actor: 'ops@example.com' };
  if (user === 'viewer') return { read: true, act: false, actor: 'viewer@example.com' };
  return { read: false, act: false };
}

/** The console served by Node's http module at `/ops`, actions allowed, the user named by `x-user`. */
export function serveConsole(
  options: ConsoleStores<SqlClient> & Omit<ConsoleSettings, 'allowActions'> & { readonly allowActions?: boolean },
): Promise<Listening> {
  const handler = consoleNode({
    allowActions: true,
    ...options,
    basePath: '/ops',
    authorize: (req) => access(req.headers['x-user']),
  });
  return listen(createServer((req, res) => void handler(req, res)));
}

/** What a describe block over one engine gets from `useConsole`. */
export interface ConsoleRef {
  readonly engine: Engine;
  /** Where the console (actions allowed, bodies hidden) answers: `http://…/ops`. */
  readonly base: string;
  /** Another console over the same engine, with other options, closed with the first: where it answers. */
  serve(
    this: void,
    options?: Omit<ConsoleSettings, 'allowActions'> & {
      readonly allowActions?: boolean;
      readonly config?: ActionConfig<SqlClient>;
    },
  ): Promise<string>;
}

/**
 * An engine and the console served over it for the tests of a describe
 * block, the tables the console shows emptied before each test.
 */
export function useConsole(factory: EngineFactory): ConsoleRef {
  let engine: Engine | undefined;
  let base: string | undefined;
  const started: Listening[] = [];
  const open = () => {
    if (engine === undefined) throw new Error('The engine is not open yet.');
    return engine;
  };
  const serve: ConsoleRef['serve'] = async (options = {}) => {
    const app = await serveConsole({ database: open().database, ...options });
    started.push(app);
    return `${app.url}/ops`;
  };
  beforeAll(async () => {
    engine = await factory.open();
    base = await serve();
  });
  afterAll(async () => {
    for (const app of started) await app.close();
    await engine?.close();
  });
  beforeEach(() =>
    open().database.query(
      'TRUNCATE retrysafe_operations, retrysafe_steps, retrysafe_outbox, retrysafe_webhook_events, retrysafe_operator_actions',
    ),
  );
  return {
    get engine() {
      return open();
    },
    get base() {
      if (base === undefined) throw new Error('The console is not served yet.');
      return base;
    },
    serve,
  };
}

import { randomBytes } from 'node:crypto';
import { RetrysafeError } from '../core/errors.js';
import { checkOptions, type OptionRules, wholeSeconds } from '../core/option-rules.js';
import { extend } from '../core/extend.js';
import type { OperationIdentity } from '../core/identity.js';
import type { RecordState } from '../core/record.js';
import { type OperatorAction, runOperatorAction } from '../operator/operator-actions.js';
import { allowedHost, LOOPBACK_HOSTS } from './allowed-hosts.js';
import { type ConsoleStores, consoleTools } from './console-tools.js';
import { formSessions } from './form-session.js';
import { html, type Html } from '../html/html.js';
import { confirmPage, messagePage } from './pages/answers.js';
import { operationHref, type PageContext } from './pages/layout.js';
import { deadLettersPage, parkedEventsPage } from './pages/messages.js';
import { operationPage } from './pages/operation.js';
import { type ListFilters, operationsPage, STATES } from './pages/operations.js';
import { ACTIVITY_PERIODS, overviewPage } from './pages/overview.js';

/** What the application's own authentication decided about one request. */
export interface ConsoleAccess {
  /** May see the console at all. */
  readonly read: boolean;
  /** May resolve, retry, purge and requeue (the console must allow actions too). */
  readonly act: boolean;
  /** Who it is, recorded with every action; required to act. */
  readonly actor?: string;
}

/** The console's options: where its stores come from (`ConsoleStores`), and how it behaves. */
export type ConsoleOptions<Tx> = ConsoleStores<Tx> & ConsoleSettings;

/** How the console behaves, whatever its stores. */
export interface ConsoleSettings {
  /** Whether anyone may act through this console; default false: read-only. */
  readonly allowActions?: boolean;
  /**
   * Whether an operator may ask to see a stored response body; default false:
   * they may hold personal data. A function decides per operation (by its
   * operation name, the route, or its tenant); the body is read only when it
   * says yes and the operator asks.
   */
  readonly showBodies?: boolean | ((identity: OperationIdentity) => boolean);
  /**
   * Signs the operators' session cookies and the forms' anti-forgery tokens.
   * Default: random per process, so a form drawn by another process of a
   * load-balanced console is refused; give every process the same secret then.
   */
  readonly secret?: string;
  /**
   * The `Host` names the console answers for: `name` on any port, or
   * `name:port` on that one. Any other is refused with 421 before anything is
   * read, which keeps out a site that points its own name at the console's
   * address (DNS rebinding). Default: the loopback names `localhost`,
   * `127.0.0.1` and `[::1]`; list the names your operators reach it by.
   */
  readonly allowedHosts?: readonly string[];
  /** How long an operator's session, and every form drawn in it, lasts. Default: 8 hours. */
  readonly sessionSeconds?: number;
  /** The clock, in milliseconds since 1970, that sessions age by. Default: `Date.now`. */
  readonly now?: (this: void) => number;
}

/** A session lasts from a minute to 30 days. */
export const consoleRules = {
  sessionSeconds: wholeSeconds(60, 30 * 86_400),
} as const satisfies OptionRules<ConsoleSettings>;

/** A request as the console reads it, whatever framework carried it. */
export interface ConsoleRequest {
  readonly method: string;
  /** The path below the console's mount point, starting with `/`. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Where the console is mounted, without a trailing slash ('' at the root). */
  readonly base: string;
  header(this: void, name: string): string | undefined;
  /** The urlencoded form of a POST. */
  form(this: void): Promise<URLSearchParams>;
}

export interface ConsoleResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** The console itself: a router from a request and its access to a page. The mounts adapt it to each framework. */
export type ConsoleHandler = (request: ConsoleRequest, access: ConsoleAccess) => Promise<ConsoleResponse>;

/** What a page gets when a query string holds a bad value. */
class BadInput extends Error {}

/** Builds the console over the operator seam. Reads never change anything; actions run only when allowed, confirmed, signed and on the record as drawn. */
export function operatorConsole<Tx>(options: ConsoleOptions<Tx>): ConsoleHandler {
  checkOptions<ConsoleSettings>(consoleRules, options);
  const tools = consoleTools(options);
  const { operators, health } = tools;
  const sessions = formSessions(
    options.secret ?? randomBytes(32).toString('base64url'),
    options.sessionSeconds ?? DEFAULT_SESSION_SECONDS,
    options.now ?? Date.now,
  );
  const hosts = options.allowedHosts ?? LOOPBACK_HOSTS;
  const shown = options.showBodies ?? false;
  const bodiesShown = typeof shown === 'function' ? shown : () => shown;
  const answer = (status: number, page: Html): ConsoleResponse => ({ status, headers: HTML_HEADERS, body: page.text });

  return async function console(request, access) {
    if (!allowedHost(hosts, request.header('host')))
      return answer(
        421,
        messagePage(
          { base: request.base, act: false, showBodies: bodiesShown },
          'Misdirected',
          'This console does not answer for this host name.',
        ),
      );
    const actor = access.actor ?? '';
    const canAct = options.allowActions === true && access.act && actor !== '';
    // Only an operator who may act needs a session: it binds the tokens of the forms drawn for them.
    const held = canAct ? sessions.current(request.header('cookie')) : undefined;
    const opened = canAct && held === undefined ? sessions.open(request.base || '/') : undefined;
    const session = held ?? opened?.session;
    const context: PageContext = {
      base: request.base,
      act: session === undefined ? false : { token: sessions.token(session, actor), actor },
      showBodies: bodiesShown,
    };
    const response = await respond(request, access, context, held);
    return opened === undefined
      ? response
      : {
          status: response.status,
          body: response.body,
          headers: extend(response.headers, { 'set-cookie': opened.setCookie }),
        };
  };

  async function respond(
    request: ConsoleRequest,
    access: ConsoleAccess,
    context: PageContext,
    held: string | undefined,
  ): Promise<ConsoleResponse> {
    if (!access.read) return answer(403, messagePage(context, 'Not allowed', 'You may not read this console.'));
    try {
      if (request.method === 'POST' && request.path.startsWith('/actions/')) {
        if (context.act === false)
          return answer(
            403,
            messagePage(
              context,
              'Read-only',
              options.allowActions === true
                ? 'You may read this console, not act.'
                : 'This console is read-only: actions are off.',
            ),
          );
        if (!sameOrigin(request))
          return answer(403, messagePage(context, 'Refused', 'This form was posted from another site.'));
        const form = await request.form();
        const { actor } = context.act;
        if (held === undefined || !sessions.valid(form.get('csrf'), held, actor))
          return answer(
            403,
            messagePage(
              context,
              'Refused',
              'This form was not drawn by this console for you, or your session ended: reload the page and try again.',
            ),
          );
        return await act(request.path.slice('/actions/'.length), form, context, actor);
      }
      if (request.method !== 'GET' && request.method !== 'HEAD')
        return answer(405, messagePage(context, 'Not here', 'Only GET, and POST to an action.'));
      return await read(request, context);
    } catch (error) {
      if (error instanceof BadInput || (error instanceof RetrysafeError && error.code === 'misuse'))
        return answer(400, messagePage(context, 'Bad request', error.message));
      throw error;
    }
  }

  async function read(request: ConsoleRequest, context: PageContext): Promise<ConsoleResponse> {
    const q = request.query;
    const notice = q.get('done') ?? undefined;
    const page = (p: Html, status = 200): ConsoleResponse => ({ status, headers: HTML_HEADERS, body: p.text });
    switch (request.path) {
      case '/': {
        const hours = Number(q.get('hours') ?? '24');
        if (!ACTIVITY_PERIODS.includes(hours))
          throw new BadInput(`The overview charts ${ACTIVITY_PERIODS.join(' or ')} hours.`);
        const [stats, oldest, stuck, activity, outbox] = await Promise.all([
          health.stats(),
          operators.oldestUnfinished(),
          health.stuck({ olderThanSeconds: 0, limit: 50 }),
          operators.activity(hours),
          health.outboxBacklog(),
        ]);
        return page(overviewPage(context, { stats, oldestUnfinishedSeconds: oldest, stuck, activity, outbox, hours }));
      }
      case '/operations': {
        const filters = listFilters(q);
        const found = await operators.list({
          limit: filters.limit,
          ...(filters.state === '' ? {} : { state: filters.state }),
          ...(filters.tenant === '' ? {} : { tenant: filters.tenant }),
          ...(filters.operation === '' ? {} : { operation: filters.operation }),
          ...(filters.key === ''
            ? {}
            : {
                key:
                  filters.match === 'prefix'
                    ? { match: 'prefix', prefix: filters.key }
                    : { match: 'exact', key: filters.key },
              }),
          ...(filters.olderThan === '' ? {} : { olderThanSeconds: Number(filters.olderThan) }),
          ...(q.get('after') === null ? {} : { after: q.get('after') ?? '' }),
        });
        return page(operationsPage(context, filters, found, notice));
      }
      case '/operation': {
        const identity = identityOf(q);
        const body = context.showBodies(identity) && q.get('body') === 'show';
        const view = await operators.operation(identity, { body });
        if (view === undefined)
          return page(
            messagePage(context, 'Not found', 'There is no such operation (it may have been purged or swept).', {
              href: `${context.base}/operations`,
              text: 'All operations',
            }),
            404,
          );
        // What a resolve form offers first: the status this operation answers success with, when one is stored.
        const successStatus = view.state === 'unknown' ? await operators.successStatus(identity) : undefined;
        return page(operationPage(context, view, { body, notice, successStatus }));
      }
      case '/dead-letters':
        return page(deadLettersPage(context, await operators.deadLetters({ limit: 50, ...after(q) }), notice));
      case '/webhook-events':
        return page(parkedEventsPage(context, await operators.parkedEvents({ limit: 50, ...after(q) }), notice));
      default:
        return page(
          messagePage(context, 'Not found', 'There is no such page.', { href: `${context.base}/`, text: 'Overview' }),
          404,
        );
    }
  }

  async function act(
    name: string,
    form: URLSearchParams,
    context: PageContext,
    actor: string,
  ): Promise<ConsoleResponse> {
    const reason = (form.get('reason') ?? '').trim();
    if (reason === '') throw new BadInput('Give a reason: it is kept with the action, for audit.');
    const planned = plan(name, form);
    const back =
      planned.action === 'requeue'
        ? `${context.base}/dead-letters`
        : planned.action === 'requeue-event'
          ? `${context.base}/webhook-events`
          : operationHref(context.base, planned.identity);
    if (form.get('confirmed') !== 'yes') {
      const [summary, warning] = describe(planned);
      return {
        status: 200,
        headers: HTML_HEADERS,
        // Both requeues are a requeue to the operator.
        body: confirmPage(
          context,
          planned.action === 'requeue-event' ? 'requeue' : planned.action,
          summary,
          warning,
          form,
          back,
        ).text,
      };
    }
    const result = await runOperatorAction(tools, planned, { actor, reason });
    if (!result.done) {
      const why =
        result.why === 'not-resumable'
          ? 'This operation cannot run again (a transparent route, or its input is gone): resolve it instead.'
          : 'The record changed since this page was drawn: nothing was done. Look at it again before you decide.';
      return {
        status: 409,
        headers: HTML_HEADERS,
        body: messagePage(context, 'Refused', why, { href: back, text: 'See it as it is now' }).text,
      };
    }
    const done = DONE[planned.action];
    const to =
      planned.action === 'purge'
        ? `${context.base}/operations?${new URLSearchParams({ key: planned.identity.key, done }).toString()}`
        : `${back}${back.includes('?') ? '&' : '?'}${new URLSearchParams({ done }).toString()}`;
    return { status: 303, headers: { location: to, ...HTML_HEADERS }, body: '' };
  }
}

/** An operator's working day. */
const DEFAULT_SESSION_SECONDS = 8 * 60 * 60;

const HTML_HEADERS: Readonly<Record<string, string>> = {
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  // No script at all, and forms post only back here.
  'content-security-policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
};

const DONE: Readonly<Record<OperatorAction['action'], string>> = {
  resolve: 'Resolved: retries of the key now get this answer.',
  retry: 'Put back into recovery: the recovery worker or the next retry resumes it.',
  purge: 'Purged: the key is unknown again, and a late retry runs the operation again.',
  requeue: 'Requeued: the relay sends the message again.',
  'requeue-event': 'Requeued: the webhook worker processes the event again.',
};

function plan(name: string, form: URLSearchParams): OperatorAction {
  if (name === 'requeue') return { action: 'requeue', messageId: required(form, 'id'), seen: required(form, 'seen') };
  // An event parked before migration 11 has an empty version.
  if (name === 'requeue-event')
    return {
      action: 'requeue-event',
      event: { receiver: required(form, 'receiver'), id: required(form, 'id') },
      seen: form.get('seen') ?? '',
    };
  const identity = identityOf(form);
  const state = required(form, 'seen_state');
  const fencingToken = Number(required(form, 'seen_fencing_token'));
  if (!STATES.includes(state as RecordState) || !Number.isInteger(fencingToken))
    throw new BadInput('This form does not say which version of the record it was drawn from.');
  const seen = { state: state as RecordState, fencingToken };
  switch (name) {
    case 'resolve': {
      const outcome = form.get('state');
      const status = Number(form.get('status'));
      if (outcome !== 'completed' && outcome !== 'failed') throw new BadInput('Choose completed or failed.');
      if (!Number.isInteger(status) || status < 200 || status > 599)
        throw new BadInput('The status must be an HTTP status from 200 to 599.');
      const location = (form.get('location') ?? '').trim();
      const bodyText = (form.get('body') ?? '').trim();
      return {
        action: 'resolve',
        identity,
        seen,
        state: outcome,
        status,
        ...(location === '' ? {} : { location }),
        ...(bodyText === '' ? {} : { body: json(bodyText) }),
      };
    }
    case 'retry':
    case 'purge':
      return { action: name, identity, seen };
    default:
      throw new BadInput(`There is no action ${name}.`);
  }
}

function describe(action: OperatorAction): readonly [Html, string | undefined] {
  switch (action.action) {
    case 'resolve':
      return [
        html`Resolve <code>${action.identity.key}</code> (${action.identity.tenant}, ${action.identity.operation}) as <strong>${action.state}</strong> with status ${action.status}.`,
        'Retries of this key will get this answer from now on, whatever really happened.',
      ];
    case 'retry':
      return [
        html`Put <code>${action.identity.key}</code> (${action.identity.tenant}, ${action.identity.operation}) back into recovery.`,
        undefined,
      ];
    case 'purge':
      return [
        html`Purge <code>${action.identity.key}</code> (${action.identity.tenant}, ${action.identity.operation}): delete its record and steps.`,
        'A retry of this key that arrives later is a new operation: it runs again, and its effect happens again.',
      ];
    case 'requeue':
      return [
        html`Send the dead letter <code>${action.messageId}</code> again.`,
        'Its consumers receive it again under the same id.',
      ];
    case 'requeue-event':
      return [
        html`Process the webhook event <code>${action.event.id}</code> of ${action.event.receiver} again.`,
        'Its handler runs again; the inbox keeps it from running twice for an event it already processed.',
      ];
  }
}

function listFilters(q: URLSearchParams): ListFilters {
  const state = q.get('state') ?? '';
  if (state !== '' && !STATES.includes(state as RecordState)) throw new BadInput(`There is no state ${state}.`);
  const olderThan = (q.get('older_than') ?? '').trim();
  if (olderThan !== '' && !/^\d+$/.test(olderThan)) throw new BadInput('"Older than" is a whole number of seconds.');
  const limitText = q.get('limit') ?? '50';
  const limit = Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new BadInput('A page shows 1 to 500 operations.');
  return {
    state: state as ListFilters['state'],
    tenant: (q.get('tenant') ?? '').trim(),
    operation: (q.get('operation') ?? '').trim(),
    key: (q.get('key') ?? '').trim(),
    match: q.get('match') === 'prefix' ? 'prefix' : 'exact',
    olderThan,
    limit,
  };
}

function identityOf(values: URLSearchParams): OperationIdentity {
  return { tenant: required(values, 'tenant'), operation: required(values, 'operation'), key: required(values, 'key') };
}

function required(values: URLSearchParams, name: string): string {
  const value = values.get(name);
  if (value === null || value === '') throw new BadInput(`"${name}" is missing.`);
  return value;
}

function after(q: URLSearchParams): { readonly after?: string } {
  const value = q.get('after');
  return value === null ? {} : { after: value };
}

function json(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new BadInput('The body is not JSON.');
  }
}

/** A browser says where a form came from: refused when it is another site (a forged post). */
function sameOrigin(request: ConsoleRequest): boolean {
  const site = request.header('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false;
  const origin = request.header('origin');
  if (origin === undefined) return true;
  const host = request.header('host');
  return URL.canParse(origin) && new URL(origin).host === host;
}

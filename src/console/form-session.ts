import { createHmac, randomBytes } from 'node:crypto';
import { sameBytes } from '../core/same-bytes.js';

/** The cookie that holds an operator's session with the console. */
const COOKIE = 'retrysafe-console-session';

/**
 * Sessions and the forms' anti-forgery tokens. A session is a cookie the
 * console signs, `<issued>.<random>.<signature>`: nothing is stored, and its
 * age is read from it. A form's token is bound to the session and the actor,
 * so a token read elsewhere, or kept past the session's end, is refused.
 */
export interface FormSessions {
  /** The request's session, when it carries one this console signed that has not expired. */
  current(this: void, cookieHeader: string | undefined): string | undefined;
  /** A new session, and the `Set-Cookie` value that gives it to the browser below `path`. */
  open(this: void, path: string): { readonly session: string; readonly setCookie: string };
  /** The token of the forms drawn for `actor` in `session`. */
  token(this: void, session: string, actor: string): string;
  /** Whether `given` is that token. */
  valid(this: void, given: string | null, session: string, actor: string): boolean;
}

export function formSessions(secret: string, lifetimeSeconds: number, now: () => number): FormSessions {
  const sign = (purpose: string, text: string) =>
    createHmac('sha256', secret).update(`retrysafe-console-${purpose}:${text}`).digest('base64url');
  const token = (session: string, actor: string) => sign('form', `${session}:${actor}`);
  const seconds = () => Math.floor(now() / 1000);

  const signed = (value: string): boolean => {
    const [issued = '', random = '', signature = '', ...rest] = value.split('.');
    if (rest.length > 0 || !/^\d{1,12}$/.test(issued) || !sameBytes(signature, sign('session', `${issued}.${random}`)))
      return false;
    const age = seconds() - Number(issued);
    return age >= 0 && age < lifetimeSeconds;
  };

  return {
    current: (cookieHeader) =>
      (cookieHeader ?? '')
        .split(/[;,]/)
        .map((pair) => pair.trim())
        .filter((pair) => pair.startsWith(`${COOKIE}=`))
        .map((pair) => pair.slice(COOKIE.length + 1))
        .find(signed),
    open: (path) => {
      const body = `${seconds()}.${randomBytes(18).toString('base64url')}`;
      const session = `${body}.${sign('session', body)}`;
      return {
        session,
        setCookie: `${COOKIE}=${session}; Path=${path}; Max-Age=${lifetimeSeconds}; HttpOnly; SameSite=Strict`,
      };
    },
    token,
    valid: (given, session, actor) => given !== null && sameBytes(given, token(session, actor)),
  };
}

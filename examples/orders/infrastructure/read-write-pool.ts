import type pg from 'pg';

/** One server of a multi-host DATABASE_URL, as a single-host URL node-postgres can open. */
export interface HostUrl {
  readonly host: string;
  readonly url: string;
}

/**
 * Splits a libpq-style multi-host URL (`postgres://user@h1:5432,h2:5432/db`)
 * into one URL per host, in order. node-postgres takes one host only.
 * `target_session_attrs` is dropped: the pool below always looks for the
 * server that takes writes, the only one retrysafe may decide on.
 */
export function splitHosts(url: string): readonly HostUrl[] {
  const match = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/.exec(url);
  if (match === null) return [{ host: url, url }];
  const [, scheme = '', userinfo, hosts = '', rest = ''] = match;
  const tail = rest.replace(/([?&])target_session_attrs=[^&]*&?/, '$1').replace(/[?&]$/, '');
  return hosts
    .split(',')
    .map((host) => ({ host, url: `${scheme}${userinfo === undefined ? '' : `${userinfo}@`}${host}${tail}` }));
}

type Query = Parameters<pg.Pool['query']>[0];

/**
 * A node-postgres pool over several hosts that uses the first one that takes
 * writes (`pg_is_in_recovery()` is false), as libpq's
 * `target_session_attrs=read-write` does. When that server stops answering
 * (a connection refused, a pool error) the pool forgets it and, at the next
 * checkout, looks again in order: after a failover it finds the promoted
 * standby. While no host takes writes, checkouts fail, and retrysafe answers
 * 503 with `Retry-After`.
 */
export class ReadWritePool {
  private current: { readonly host: HostUrl; readonly pool: pg.Pool } | undefined;
  private finding: Promise<{ readonly host: HostUrl; readonly pool: pg.Pool }> | undefined;
  private readonly listeners: ((error: Error) => void)[] = [];
  private readonly acquireListeners: ((client: pg.PoolClient) => void)[] = [];
  private closed = false;

  constructor(
    private readonly hosts: readonly HostUrl[],
    private readonly open: (url: string) => pg.Pool,
  ) {}

  async connect(): Promise<pg.PoolClient> {
    const { pool } = await this.primary();
    try {
      return await pool.connect();
    } catch (error) {
      this.forget(pool);
      throw error;
    }
  }

  async query(text: Query, values?: unknown[]): Promise<pg.QueryResult> {
    const { pool } = await this.primary();
    try {
      return await pool.query(text, values);
    } catch (error) {
      if (lostServer(error)) this.forget(pool);
      throw error;
    }
  }

  /** The single-host URL of the server that takes writes now, for a connection of its own (LISTEN). */
  async primaryUrl(): Promise<string> {
    return (await this.primary()).host.url;
  }

  /** `error`: the errors of idle connections, which the pool discards; `acquire`: each client as it is handed out. */
  on(event: 'error', listener: (error: Error) => void): this;
  on(event: 'acquire', listener: (client: pg.PoolClient) => void): this;
  on(event: 'error' | 'acquire', listener: ((error: Error) => void) | ((client: pg.PoolClient) => void)): this {
    if (event === 'error') this.listeners.push(listener as (error: Error) => void);
    else this.acquireListeners.push(listener as (client: pg.PoolClient) => void);
    return this;
  }

  async end(): Promise<void> {
    this.closed = true;
    const current = this.current;
    this.current = undefined;
    await current?.pool.end();
  }

  private primary(): Promise<{ readonly host: HostUrl; readonly pool: pg.Pool }> {
    if (this.closed) return Promise.reject(new Error('The pool is closed.'));
    if (this.current !== undefined) return Promise.resolve(this.current);
    this.finding ??= this.find().finally(() => (this.finding = undefined));
    return this.finding;
  }

  private async find(): Promise<{ readonly host: HostUrl; readonly pool: pg.Pool }> {
    const refused: string[] = [];
    for (const host of this.hosts) {
      const pool = this.open(host.url);
      pool.on('error', (error) => {
        this.forget(pool);
        for (const listener of this.listeners) listener(error);
      });
      pool.on('acquire', (client) => {
        for (const listener of this.acquireListeners) listener(client);
      });
      try {
        const { rows } = await pool.query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby');
        if (rows[0]?.standby === false) {
          this.current = { host, pool };
          return this.current;
        }
        refused.push(`${host.host} is a standby`);
      } catch (error) {
        refused.push(`${host.host}: ${error instanceof Error ? error.message : String(error)}`);
      }
      await pool.end().catch(() => undefined);
    }
    throw new Error(`No PostgreSQL host takes writes (${refused.join('; ')}).`);
  }

  private forget(pool: pg.Pool): void {
    if (this.current?.pool !== pool) return;
    this.current = undefined;
    // Clients still checked out finish on the old pool; it closes once they are back.
    pool.end().catch(() => undefined);
  }
}

/** Errors that say the server is gone or no longer the primary, rather than that one statement failed. */
function lostServer(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string')
    return error instanceof Error && /Connection terminated|not queryable/.test(error.message);
  return (
    code.startsWith('08') ||
    code.startsWith('57P') ||
    code === '25006' ||
    code === 'ECONNREFUSED' ||
    code === 'ECONNRESET'
  );
}

import { OUTBOX_CHANNEL } from '../postgres/sql/outbox.js';
import type { Listener } from './poll-loop.js';

type Notification = { readonly channel: string };

/** The members of a node-postgres `Client` (a dedicated one, not a pool) that the listener calls. */
export interface PgListenClientLike {
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (message: Notification) => void): unknown;
  removeListener(event: 'notification', listener: (message: Notification) => void): unknown;
}

/** The member of a PGlite instance that the listener calls. */
export interface PGliteListenLike {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/**
 * Wakes a relay when a message is enqueued, through LISTEN on a node-postgres
 * client the caller connected for this alone (a pooled client would lose the
 * subscription). If that connection drops, the relay goes on polling.
 */
export function pgListener(client: PgListenClientLike): Listener {
  return async (wake) => {
    const onNotification = (message: Notification): void => {
      if (message.channel === OUTBOX_CHANNEL) wake();
    };
    client.on('notification', onNotification);
    await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    return async () => {
      client.removeListener('notification', onNotification);
      await client.query(`UNLISTEN ${OUTBOX_CHANNEL}`);
    };
  };
}

/** Wakes a relay when a message is enqueued, on an embedded PGlite database. */
export function pgliteListener(db: PGliteListenLike): Listener {
  return (wake) => db.listen(OUTBOX_CHANNEL, () => wake());
}

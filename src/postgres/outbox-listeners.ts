import type { Listener } from '../background/poll-loop.js';
import { OUTBOX_CHANNEL } from './sql/outbox.js';

type Notification = { readonly channel: string };

/** The members of a node-postgres `Client` (a dedicated one, not a pool) that the listener calls. */
export interface PgListenClientLike {
  query(text: string): Promise<unknown>;
  on(event: 'notification', listener: (message: Notification) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeListener(event: 'notification', listener: (message: Notification) => void): unknown;
  removeListener(event: 'error', listener: (error: Error) => void): unknown;
}

/** The member of a PGlite instance that the listener calls. */
export interface PGliteListenLike {
  listen(channel: string, callback: (payload: string) => void): Promise<() => Promise<void>>;
}

/**
 * Wakes a relay when a message is enqueued, through LISTEN on a node-postgres
 * client the caller connected for this alone (a pooled client would lose the
 * subscription). If that connection drops, the relay goes on polling: the
 * listener guards the client's 'error' (unhandled, it would end the process)
 * and wakes the relay, since a notification may have been lost with it.
 */
export function pgListener(client: PgListenClientLike): Listener {
  return async (wake) => {
    const onNotification = (message: Notification): void => {
      if (message.channel === OUTBOX_CHANNEL) wake();
    };
    let lost = false;
    const onError = (): void => {
      lost = true;
      wake();
    };
    client.on('notification', onNotification);
    client.on('error', onError);
    try {
      await client.query(`LISTEN ${OUTBOX_CHANNEL}`);
    } catch (error) {
      client.removeListener('notification', onNotification);
      client.removeListener('error', onError);
      throw error;
    }
    return async () => {
      client.removeListener('notification', onNotification);
      // A lost connection can still emit 'error' as its socket closes: the guard then stays.
      if (lost) throw new Error('The LISTEN connection was lost.');
      await client.query(`UNLISTEN ${OUTBOX_CHANNEL}`);
      client.removeListener('error', onError);
    };
  };
}

/** Wakes a relay when a message is enqueued, on an embedded PGlite database. */
export function pgliteListener(db: PGliteListenLike): Listener {
  return (wake) => db.listen(OUTBOX_CHANNEL, () => wake());
}

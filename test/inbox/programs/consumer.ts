/**
 * A consumer process: consumes BROKER (amqp: QUEUE; jetstream: STREAM and
 * DURABLE) through the inbox of DATABASE_URL as consumer "emails", printing
 * each settled delivery, until SIGTERM.
 * RETRYSAFE_CRASH_AT=consumer-after-commit kills it after its first commit, before the ack.
 */
import { connect as connectNats } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import amqp from 'amqplib';
import pg from 'pg';
import {
  consumeAmqp,
  consumeJetStream,
  type DeliveryOutcome,
  type InboxSubscription,
} from '../../../src/inbox/index.js';
import { fromPg, portable } from '../../../src/postgres/index.js';
import { sendEmail } from './emails.js';

const env = process.env;
const pool = new pg.Pool({ connectionString: env.DATABASE_URL });
const options = {
  database: portable(fromPg(pool)),
  consumer: 'emails',
  handler: sendEmail('emails'),
  onSettled: (outcome: DeliveryOutcome) => console.log(JSON.stringify(outcome)),
};

let subscription: InboxSubscription;
let disconnect: () => Promise<void>;
if (env.BROKER === 'amqp') {
  const connection = await amqp.connect(env.AMQP_URL ?? '');
  const channel = await connection.createChannel();
  await channel.prefetch(10);
  subscription = await consumeAmqp(channel, { ...options, queue: env.QUEUE ?? '' });
  disconnect = () => connection.close();
} else {
  const connection = await connectNats({ servers: env.NATS_URL ?? '' });
  const consumer = await jetstream(connection).consumers.get(env.STREAM ?? '', env.DURABLE ?? '');
  subscription = await consumeJetStream(consumer, options);
  disconnect = () => connection.close();
}
console.log(JSON.stringify({ ready: true }));

process.once('SIGTERM', () => {
  void (async () => {
    await subscription.close();
    await disconnect();
    await pool.end();
  })();
});

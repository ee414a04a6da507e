import { randomBytes } from 'node:crypto';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  StorageType,
} from '@nats-io/jetstream';
import { connect, nanos, type NatsConnection } from '@nats-io/transport-node';

/** A stream named for this test run alone, with a durable pull consumer. */
export interface JetStreamRoute {
  readonly connection: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly stream: string;
  /** The stream takes `${subject}.>`; use `${subject}.emails.welcome` and so on as topics. */
  readonly subject: string;
  /** The durable consumer: explicit acks, redelivery 2 s after a message was left unacked. */
  readonly durable: string;
  /** Messages stored in the stream. */
  stored(): Promise<number>;
  /** Empties the stream and recreates the consumer, between tests. */
  reset(): Promise<void>;
  /** Deletes the stream and disconnects. */
  close(): Promise<void>;
}

export interface JetStreamRouteOptions {
  /** How long the stream remembers a `Nats-Msg-Id` to drop copies. Default 2 minutes. */
  readonly duplicateWindowMs?: number;
}

export async function jetStreamRoute(url: string, options: JetStreamRouteOptions = {}): Promise<JetStreamRoute> {
  const suffix = randomBytes(6).toString('hex');
  const stream = `RETRYSAFE_TEST_${suffix}`;
  const subject = `retrysafe-test-${suffix}`;
  const durable = 'emails';
  const connection = await connect({ servers: url });
  const jsm = await jetstreamManager(connection);
  await jsm.streams.add({
    name: stream,
    subjects: [`${subject}.>`],
    storage: StorageType.Memory,
    duplicate_window: nanos(options.duplicateWindowMs ?? 120_000),
  });
  const addConsumer = () =>
    jsm.consumers.add(stream, {
      durable_name: durable,
      ack_policy: AckPolicy.Explicit,
      ack_wait: nanos(2000),
      deliver_policy: DeliverPolicy.All,
    });
  await addConsumer();
  return {
    connection,
    js: jetstream(connection),
    jsm,
    stream,
    subject,
    durable,
    stored: async () => (await jsm.streams.info(stream)).state.messages,
    async reset() {
      await jsm.consumers.delete(stream, durable);
      await jsm.streams.purge(stream);
      await addConsumer();
    },
    async close() {
      await jsm.streams.delete(stream);
      await connection.close();
    },
  };
}

import { headers as natsHeaders, connect as connectNats } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import amqp from 'amqplib';
import { amqpTransport, jetStreamTransport, type Transport, webhookTransport } from '../../../src/outbox/index.js';

/** The transport named by `TRANSPORT` (amqp, jetstream or webhook), configured from the environment. */
export async function openTransport(
  env: NodeJS.ProcessEnv,
): Promise<{ readonly transport: Transport; readonly close: () => Promise<void> }> {
  switch (env.TRANSPORT) {
    case 'amqp': {
      const connection = await amqp.connect(required(env, 'AMQP_URL'));
      const channel = await connection.createConfirmChannel();
      return {
        transport: amqpTransport(channel, { exchange: required(env, 'EXCHANGE') }),
        close: () => connection.close(),
      };
    }
    case 'jetstream': {
      const connection = await connectNats({ servers: required(env, 'NATS_URL') });
      return {
        transport: jetStreamTransport(jetstream(connection), { headers: natsHeaders }),
        close: () => connection.close(),
      };
    }
    case 'webhook':
      return {
        transport: webhookTransport({
          url: required(env, 'WEBHOOK_URL'),
          secrets: required(env, 'WEBHOOK_SECRET').split(' '),
        }),
        close: async () => {},
      };
    default:
      throw new Error(`Unknown TRANSPORT "${env.TRANSPORT}".`);
  }
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const value = env[name];
  if (value === undefined || value === '') throw new Error(`${name} is required.`);
  return value;
}

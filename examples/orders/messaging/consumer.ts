/**
 * The order-confirmation consumer, as a process of its own for a deployment
 * with a broker (see README.md):
 *
 *   DATABASE_URL=postgres://… AMQP_URL=amqp://… node --conditions=retrysafe-source --import tsx examples/orders/messaging/consumer.ts
 *
 * Each settled delivery is printed as one JSON line. SIGTERM or SIGINT stops
 * it cleanly; if the broker connection is lost for good it exits with 1, for
 * its supervisor to restart it.
 */
import type { DeliveryOutcome } from 'retrysafe/inbox';
import { loadConfig } from '../infrastructure/config.js';
import { subscribeConfirmations } from './confirmation-subscription.js';
import { openDatabase } from '../infrastructure/open-database.js';
import { prepareDatabase } from '../data/schema.js';

async function main(): Promise<void> {
  const loaded = loadConfig(process.env);
  if (!loaded.ok) return refuse(loaded.errors);
  const { database: databaseConfig, broker } = loaded.config;
  if (databaseConfig.kind !== 'postgres')
    return refuse(['DATABASE_URL is required: the consumer shares the service’s PostgreSQL database.']);
  if (broker.kind === 'local')
    return refuse(['AMQP_URL or NATS_URL is required; without a broker the service sends confirmations itself.']);

  const opened = await openDatabase(databaseConfig);
  try {
    // The consumer may start before the service: the tables it writes must exist.
    await prepareDatabase(opened.database);
    const subscription = await subscribeConfirmations(broker, {
      database: opened.database,
      onSettled: (outcome) => console.log(JSON.stringify(settled(outcome))),
      onLost: (error) => exit(`lost the broker: ${String(error)}`),
    });
    console.log(JSON.stringify({ ready: true, broker: broker.kind }));
    stopOnSignal(async () => {
      await subscription.close();
      await opened.close();
    });
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/** A log line for a settled delivery: the error's message rather than the whole error. */
function settled(outcome: DeliveryOutcome): Record<string, unknown> {
  return outcome.kind === 'failed' ? { kind: outcome.kind, id: outcome.id, error: String(outcome.error) } : outcome;
}

function stopOnSignal(closeAll: () => Promise<void>): void {
  const stop = (signal: NodeJS.Signals) => {
    console.log(`consumer: ${signal}, stopping`);
    // The deliveries in hand are settled before the database closes under them.
    closeAll().catch((error: unknown) => exit(`unclean stop: ${String(error)}`));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

function refuse(errors: readonly string[]): void {
  console.error(`consumer: cannot start:\n  ${errors.join('\n  ')}`);
  process.exitCode = 1;
}

/** Ends the process at once: an open pool or a half-closed subscription would keep it alive. */
function exit(message: string): void {
  console.error(`consumer: ${message}`);
  process.exit(1);
}

main().catch((error: unknown) => exit(`failed to start: ${String(error)}`));

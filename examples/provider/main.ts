/**
 * Runs the fake payment provider on its own:
 *
 *   node --conditions=retrysafe-source --import tsx examples/provider/main.ts
 *
 * PORT (default 4010; 0 picks a free one), HOST (default 127.0.0.1),
 * PROVIDER_STATE_FILE (keep charges across restarts),
 * PROVIDER_FAULTS (a fault, or a JSON array of them, active from the start,
 * e.g. '{"mode":"charge-then-drop","times":2}'),
 * PROVIDER_WEBHOOK_URL and PROVIDER_WEBHOOK_SECRET (send payment.succeeded events).
 *
 * Prints one line, `provider listening at <url>`, once it accepts requests.
 */
import { parseFaults } from './faults.js';
import { startProvider } from './provider.js';

const env = (name: string): string | undefined => (process.env[name] === '' ? undefined : process.env[name]);

const provider = await startProvider({
  port: Number(env('PORT') ?? 4010),
  host: env('HOST') ?? '127.0.0.1',
  stateFile: env('PROVIDER_STATE_FILE'),
  faults: parseFaults(env('PROVIDER_FAULTS') ?? '[]'),
  webhookUrl: env('PROVIDER_WEBHOOK_URL'),
  webhookSecret: env('PROVIDER_WEBHOOK_SECRET'),
});
console.log(`provider listening at ${provider.url}`);

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void provider.close().then(() => process.exit(0)));
}

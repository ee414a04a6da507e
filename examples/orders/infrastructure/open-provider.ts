import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type ProviderClient, providerClient } from '../../provider/client.js';
import { type Provider, startProvider } from '../../provider/provider.js';
import type { ProviderConfig } from './config.js';

export interface OpenProvider {
  /** For the payment routes, usable at once: a local provider's calls wait until it has started. */
  readonly client: ProviderClient;
  /**
   * Starts the local provider, which posts its webhooks to `webhookUrl`: the
   * service's own, known only once the service listens. A remote provider is
   * running already. Resolves to a description for the start-up banner.
   */
  start(webhookUrl: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * The provider at PROVIDER_URL, or a local fake one whose charges survive a
 * restart of the service and that signs its webhooks with `webhookSecret`.
 */
export function openProvider(config: ProviderConfig, webhookSecret: string | undefined): OpenProvider {
  if (config.kind === 'remote') {
    return {
      client: providerClient(config.url),
      start: () => Promise.resolve(`payment provider at ${config.url}`),
      close: async () => {},
    };
  }
  let started: Provider | undefined;
  let settle: { resolve(client: ProviderClient): void; reject(error: unknown): void } | undefined;
  const ready = new Promise<ProviderClient>((resolve, reject) => (settle = { resolve, reject }));
  // Nothing may be waiting when a start fails; the failure is main's to report.
  ready.catch(() => undefined);
  return {
    client: {
      charge: async (input, signal) => (await ready).charge(input, signal),
      lookup: async (key, signal) => (await ready).lookup(key, signal),
    },
    async start(webhookUrl) {
      try {
        await mkdir(dirname(config.stateFile), { recursive: true });
        const webhooks = webhookSecret === undefined ? {} : { webhookUrl, webhookSecret };
        started = await startProvider({ stateFile: config.stateFile, ...webhooks });
      } catch (error) {
        settle?.reject(error);
        throw error;
      }
      settle?.resolve(providerClient(started.url));
      return `local payment provider at ${started.url}`;
    },
    close: async () => started?.close(),
  };
}

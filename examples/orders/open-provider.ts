import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { type ProviderClient, providerClient } from '../provider/client.js';
import { startProvider } from '../provider/provider.js';
import type { ProviderConfig } from './config.js';

export interface OpenProvider {
  readonly client: ProviderClient;
  readonly description: string;
  close(): Promise<void>;
}

/** The provider at PROVIDER_URL, or a local fake one whose charges survive a restart of the service. */
export async function openProvider(config: ProviderConfig): Promise<OpenProvider> {
  if (config.kind === 'remote') return { client: providerClient(config.url), description: `payment provider at ${config.url}`, close: async () => {} };
  await mkdir(dirname(config.stateFile), { recursive: true });
  const provider = await startProvider({ stateFile: config.stateFile });
  return { client: providerClient(provider.url), description: `local payment provider at ${provider.url}`, close: () => provider.close() };
}

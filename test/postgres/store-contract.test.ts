import { randomBytes } from 'node:crypto';
import { encryptedStore, keyring } from '../../src/encryption/index.js';
import { Registry } from 'prom-client';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { storeTimer } from '../../src/observe/index.js';
import { openTelemetryTracing } from '../../src/otel/index.js';
import { postgresStore } from '../../src/postgres/index.js';
import { budgetedStore } from '../../src/store/budgeted-store.js';
import type { OperationStore } from '../../src/store/operation-store.js';
import { replayCached } from '../../src/store/replay-cache.js';
import type { SqlClient } from '../../src/store/sql-client.js';
import { tracedStore } from '../../src/store/traced-store.js';
import { describeStoreContract } from '../../src/testing/index.js';
import { engines } from '../support/engines.js';
import { countingHeldClaims } from '../support/held-claims.js';

const tracer = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(new InMemorySpanExporter())],
}).getTracer('store-contract');
const keys = keyring({ current: 'k2', keys: { k1: randomBytes(32), k2: randomBytes(32) } });

const variants: readonly {
  readonly name: string;
  wrap(store: OperationStore<SqlClient>): OperationStore<SqlClient>;
}[] = [
  { name: 'postgresStore', wrap: (store) => store },
  { name: 'encryptedStore(postgresStore)', wrap: (store) => encryptedStore(store, keys, { requireEncryption: true }) },
  { name: 'storeTimer(postgresStore)', wrap: (store) => storeTimer(new Registry())(store) },
  { name: 'tracedStore(postgresStore)', wrap: (store) => tracedStore(store, openTelemetryTracing({ tracer })) },
  { name: 'replayCached(postgresStore)', wrap: (store) => replayCached(store).store },
  // The outermost layer of the store idempotency() hands out, with the default budget.
  { name: 'budgetedStore(postgresStore)', wrap: (store) => budgetedStore(store, 5000) },
];

for (const factory of engines) {
  for (const variant of variants) {
    describeStoreContract(
      `${variant.name} on ${factory.name}`,
      async () => {
        const engine = await factory.open();
        const watched = countingHeldClaims(engine.database);
        return {
          store: variant.wrap(postgresStore(watched.database)),
          nextHeldClaim: watched.nextHeld,
          expire: async (identity) => {
            await engine.database.query(
              "UPDATE retrysafe_operations SET lease_expires_at = now() - interval '1 second' WHERE tenant = $1 AND operation = $2 AND key = $3",
              [identity.tenant, identity.operation, identity.key],
            );
          },
          close: () => engine.close(),
        };
      },
      // PGlite runs one transaction at a time.
      { concurrent: !factory.name.includes('pglite') },
    );
  }
}

import { randomUUID } from 'node:crypto';
import { postgresOperatorTools } from '../../src/postgres/postgres-operator-tools.js';
import { insertRecord, unknownPayment } from '../retention/records.js';
import { engines } from '../support/engines.js';
import { memoryOperatorTools } from './memory-operator-tools.js';
import { describeOperatorContract } from './operator-contract.js';

// The same contract over the seam held in memory (built from its interfaces only) and over each PostgreSQL engine.
describeOperatorContract('memory', () => {
  const { tools, seed } = memoryOperatorTools();
  return Promise.resolve({
    tools,
    seed: {
      unknown: (identity, options) => Promise.resolve(seed.unknown(identity, options)),
      completed: (identity, status) => Promise.resolve(seed.completed(identity, status)),
      deadLetter: (topic) => Promise.resolve(seed.deadLetter(topic)),
    },
    close: () => Promise.resolve(),
  });
});

for (const factory of engines)
  describeOperatorContract(factory.name, async () => {
    const engine = await factory.open();
    const { database } = engine;
    return {
      tools: postgresOperatorTools(database),
      seed: {
        async unknown(identity, options = {}) {
          await unknownPayment(database, identity, 'the provider did not answer the charge');
          // Without its input nothing can run it again.
          if (options.resumable === false)
            await database.query(
              'UPDATE retrysafe_operations SET input = NULL WHERE tenant = $1 AND operation = $2 AND key = $3',
              [identity.tenant, identity.operation, identity.key],
            );
        },
        async completed(identity, status) {
          await insertRecord(database, { ...identity, state: 'completed' });
          await database.query(
            'UPDATE retrysafe_operations SET response_status = $4 WHERE tenant = $1 AND operation = $2 AND key = $3',
            [identity.tenant, identity.operation, identity.key, status],
          );
        },
        async deadLetter(topic) {
          const id = randomUUID();
          await database.query(
            `INSERT INTO retrysafe_outbox (id, topic, payload, state, attempts, last_error, parked_at)
             VALUES ($1, $2, '{}', 'dead', 8, 'broker refused: 503', now() - interval '1 minute')`,
            [id, topic],
          );
          return id;
        },
      },
      close: () => engine.close(),
    };
  });

import type { IdempotencyOptions } from 'retrysafe';
import type { SqlClient } from 'retrysafe/postgres';

/**
 * The retention of each operation: the tenants named keep their responses as
 * long as configured, the others retrysafe's 24 hours. Published as varying
 * per operation in the idempotency specification.
 */
export function retentionByTenant(
  seconds: ReadonlyMap<string, number>,
): Pick<IdempotencyOptions<SqlClient>, 'retention'> {
  if (seconds.size === 0) return {};
  return {
    retention: ({ tenant }) => {
      const responseSeconds = seconds.get(tenant);
      return responseSeconds === undefined ? {} : { responseSeconds };
    },
  };
}

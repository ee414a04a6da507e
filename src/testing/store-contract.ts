import { describe } from 'vitest';
import { describeAtomicContract } from './atomic-contract.js';
import { type StoreUnderTest, useStore } from './contract-fixtures.js';
import { describeLeaseContract } from './lease-contract.js';

export interface StoreContractOptions {
  /**
   * Whether two transactions of the store run side by side. When false (PGlite
   * runs one at a time), the tests of a claim waiting behind an uncommitted
   * one are left out. When true, the store under test gives `nextHeldClaim`.
   */
  readonly concurrent: boolean;
}

/**
 * Registers vitest tests that prove a store keeps the `OperationStore`
 * contract, without HTTP: the atomic claim and its completion, and leased mode
 * with its fenced writes. `open` is called once, before the tests; every test
 * uses identities of its own under one tenant, so a store may be shared.
 * This module imports `vitest`, which the caller's test run provides.
 *
 * ```ts
 * // my-store.test.ts
 * import { describeStoreContract } from 'retrysafe/testing';
 *
 * describeStoreContract('myStore', async () => {
 *   const db = await openScratchDatabase();
 *   return {
 *     store: myStore(db),
 *     expire: (identity) => db.expireLease(identity),
 *     nextHeldClaim: () => db.nextHeldClaim(),
 *     close: () => db.drop(),
 *   };
 * }, { concurrent: true });
 * ```
 */
export function describeStoreContract<Tx>(
  name: string,
  open: () => Promise<StoreUnderTest<Tx>>,
  options: StoreContractOptions,
): void {
  describe(`operation store contract: ${name}`, () => {
    const subject = useStore(open);
    describeAtomicContract(subject, options.concurrent);
    describeLeaseContract(subject);
  });
}

export type { StoreUnderTest } from './contract-fixtures.js';
export { describeStoreContract, type StoreContractOptions } from './store-contract.js';
export { manualClock, type ManualClock } from './manual-clock.js';

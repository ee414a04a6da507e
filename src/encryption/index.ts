export { encryptedStore, type EncryptedStoreOptions } from './encrypted-store.js';
export { keyring, type Keyring, type KeyringOptions } from './keyring.js';

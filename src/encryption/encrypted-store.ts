import { RetrysafeError } from '../core/errors.js';
import type { OperationIdentity } from '../core/identity.js';
import type { OperationRecord } from '../core/record.js';
import { decorate } from '../store/decorate.js';
import type { OperationStore } from '../store/operation-store.js';
import type { Completion } from '../core/completion.js';
import type { Keyring } from './keyring.js';
import { openBody, sealBody, type Unreadable } from './response-cipher.js';
import { extend } from '../core/extend.js';

export interface EncryptedStoreOptions {
  /**
   * Refuse stored bodies that are not encrypted. By default a body without
   * the encrypted prefix was written before encryption was turned on and is
   * replayed as is; anyone who can write to the table could plant one too.
   */
  readonly requireEncryption?: boolean;
}

/**
 * Wraps a store so that response bodies are encrypted at rest (AES-256-GCM),
 * bound to their operation's identity. Every stored completion is sealed with
 * the keyring's current key; every completed record read back is opened with
 * the key its body names. Status, headers, input and step results stay as they
 * are; every other call is forwarded untouched. A body that cannot be opened
 * is never replayed: the call fails as the store would, with
 * `store-unavailable` (cause `decryption-failed`), so the request gets 503
 * and its handler does not run.
 */
export function encryptedStore<Tx>(
  store: OperationStore<Tx>,
  keys: Keyring,
  options: EncryptedStoreOptions = {},
): OperationStore<Tx> {
  const requireEncryption = options.requireEncryption ?? false;
  // An omitted body is empty and never replayed: there is nothing to seal or open.
  const seal = (identity: OperationIdentity, completion: Completion): Completion =>
    completion.omitted === true
      ? completion
      : extend(completion, {
          reply: extend(completion.reply, { body: sealBody(completion.reply.body, identity, keys) }),
        });
  const open = (identity: OperationIdentity, record: OperationRecord): OperationRecord => {
    if ((record.state !== 'completed' && record.state !== 'failed') || record.responseOmitted) return record;
    const opened = openBody(record.response.body, identity, keys, requireEncryption);
    if (!opened.ok) throw unreadable(opened);
    return extend(record, { response: extend(record.response, { body: opened.body }) });
  };

  return decorate(store, {
    overrides: {
      atomic: (request, work, taken) =>
        // Async, so that a body that cannot be opened rejects like any failure of the work.
        store.atomic(
          request,
          async ({ claim, tx }) => {
            const settlement = await work({
              claim:
                claim.kind === 'existing' ? extend(claim, { record: open(request.identity, claim.record) }) : claim,
              tx,
            });
            return settlement.commit
              ? extend(settlement, { completion: seal(request.identity, settlement.completion) })
              : settlement;
          },
          (record) => taken(open(request.identity, record)),
        ),
      async claimLease(request) {
        const claim = await store.claimLease(request);
        return claim.kind === 'existing' ? { kind: 'existing', record: open(request.identity, claim.record) } : claim;
      },
      completeLease: async (lease, completion) => store.completeLease(lease, seal(lease.identity, completion)),
      resolveUnknown: async (identity, completion, reason, fencingToken) =>
        store.resolveUnknown(identity, seal(identity, completion), reason, fencingToken),
      async read(identity) {
        const record = await store.read(identity);
        return record === undefined ? undefined : open(identity, record);
      },
    },
  });
}

/** A store failure, so the core answers 503 and never runs the handler; the cause says why. */
function unreadable(opened: Unreadable): RetrysafeError {
  const cause = new RetrysafeError('decryption-failed', why(opened));
  return new RetrysafeError('store-unavailable', 'A stored response could not be decrypted; it is not replayed.', {
    cause,
  });
}

function why(unreadable: Unreadable): string {
  switch (unreadable.reason) {
    case 'unknown-key':
      return `The stored body was encrypted with key "${unreadable.keyId}", which is not in the keyring.`;
    case 'not-authentic':
      return `The stored body does not authenticate under key "${unreadable.keyId}": it was altered, or belongs to another operation.`;
    case 'malformed':
      return 'The stored body starts like an encrypted one but is too short to be one.';
    case 'plaintext':
      return 'The stored body is not encrypted, and requireEncryption is set.';
  }
}

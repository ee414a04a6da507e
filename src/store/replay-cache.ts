import { type Clock, systemClock } from '../core/clock.js';
import type { Completion } from '../core/completion.js';
import type { OperationIdentity } from '../core/identity.js';
import type { CompletedRecord, OperationRecord } from '../core/record.js';
import { decorate } from './decorate.js';
import type { ClaimRequest } from './atomic-store.js';
import type { OperationStore } from './operation-store.js';
import { extend } from '../core/extend.js';
import { byteSize, checkOptions, count, type OptionRules, seconds, TIMER_MAX_SECONDS } from '../core/option-rules.js';

/** Bounds of the in-process cache of finished records; see `replayCached`. */
export interface ReplayCacheOptions {
  /** Most records kept. Default 10 000. */
  readonly entries?: number;
  /**
   * Most bytes kept, counted as the heap holds them: about 1.4 KB for each
   * entry's objects, plus its strings, body, fingerprint, principal digest and headers. Default 32 MiB.
   */
  readonly bytes?: number;
  /**
   * Longest a record is served from memory, whatever its response retention:
   * the bound on how long a record deleted by hand can still be replayed. Until
   * then two processes can give its key two answers: one replays it from
   * memory, one finds nothing and runs the operation again. Restart every
   * process after such a delete, or keep the cache off. Default 60 s.
   */
  readonly maxAgeSeconds?: number;
}

/** What one process's heap can hold; a record is served from memory for a bounded time. */
export const replayCacheRules = {
  entries: count(1, 100_000_000),
  bytes: byteSize(1, 2 ** 40),
  maxAgeSeconds: seconds(0.001, TIMER_MAX_SECONDS),
} as const satisfies OptionRules<ReplayCacheOptions>;

export const defaultReplayCache: Required<ReplayCacheOptions> = {
  entries: 10_000,
  bytes: 32 * 2 ** 20,
  maxAgeSeconds: 60,
};

/**
 * What a kept record holds besides its strings and bytes, as V8 holds it: the
 * record, its identity, four Dates, the response and its headers object, two
 * Buffers with their ArrayBuffers, the entry and its Map slot. Measured on
 * Node 20 with node-postgres at 1 310 to 1 430 bytes, the Map's spare slots
 * included (test/store/support/replay-cache-memory.ts).
 */
const ENTRY_OVERHEAD_BYTES = 1440;
/** A header's slot in its object, besides its strings; a header of several lines adds its array. */
const HEADER_SLOT_BYTES = 8;
const LINES_ARRAY_BYTES = 48;

interface Entry {
  readonly record: CompletedRecord;
  readonly bytes: number;
  /** The clock's monotonic time after which the entry is not served. */
  readonly servedUntil: number;
}

/** A store that keeps the finished records it reads and commits, and what it keeps. */
export interface ReplayCache<Tx> {
  readonly store: OperationStore<Tx>;
  /**
   * The record kept for `identity` while it may be served, or `undefined`:
   * no round trip and no promise, so a cached replay waits on nothing.
   */
  recall(this: void, identity: OperationIdentity): CompletedRecord | undefined;
}

/**
 * Keeps finished records (`completed`, `failed`) that `read` returned or that
 * a new key's committed transaction wrote, so a replay, the first retry
 * included, is answered without a round trip. Sound because a finished record
 * never changes until its response expires and the sweeper makes it a
 * tombstone: each entry is dropped before that, by the store's own expiry
 * measured from the moment the read, or the transaction's `BEGIN`, was sent
 * (so neither clock skew nor a round trip's latency can stretch it), and
 * after `maxAgeSeconds` at most. A transaction that rolled back, or lost its
 * identity to another writer, keeps nothing.
 * `in_progress`, `unknown` and tombstones are never kept. Entries are per
 * tenant, operation and key, and least recently used ones go first when a
 * bound is reached. It sits below the route: tenant resolution, authorisation
 * and the fingerprint check run on every request, cached or not.
 */
export function replayCached<Tx>(
  store: OperationStore<Tx>,
  options: ReplayCacheOptions = {},
  clock: Clock = systemClock,
): ReplayCache<Tx> {
  checkOptions(replayCacheRules, options, 'replayCache.');
  const bounds = extend(defaultReplayCache, options);
  const entries = new Map<string, Entry>();
  let bytes = 0;

  const drop = (name: string, entry: Entry): void => {
    entries.delete(name);
    bytes -= entry.bytes;
  };
  const keep = (name: string, record: CompletedRecord, sentAt: number): void => {
    const size = entryBytes(name, record);
    if (size > bounds.bytes) return;
    const left = Math.min(record.responseExpiresAt.getTime() - record.readAt.getTime(), bounds.maxAgeSeconds * 1000);
    if (!(left > 0)) return;
    const old = entries.get(name);
    if (old !== undefined) drop(name, old);
    entries.set(name, { record: ownBytes(record), bytes: size, servedUntil: sentAt + left });
    bytes += size;
    // A Map iterates in insertion order, and a hit re-inserts: the first entry is the least recently used.
    for (const [oldest, entry] of entries) {
      if (entries.size <= bounds.entries && bytes <= bounds.bytes) break;
      drop(oldest, entry);
    }
  };

  const recall = (identity: OperationIdentity): CompletedRecord | undefined => {
    const name = nameOf(identity);
    const cached = entries.get(name);
    if (cached === undefined) return undefined;
    drop(name, cached);
    if (!(clock.monotonic() < cached.servedUntil)) return undefined;
    entries.set(name, cached);
    bytes += cached.bytes;
    return cached.record;
  };

  const cachedStore = decorate(store, {
    overrides: {
      async atomic(request, work, taken) {
        // Taken before BEGIN: the record's expiry counts from its transaction's start (`now()`), which is later.
        const sentAt = clock.monotonic();
        let stored: Completion | undefined;
        let lost = false;
        const value = await store.atomic(
          request,
          async (transaction) => {
            const settlement = await work(transaction);
            stored = settlement.commit ? settlement.completion : undefined;
            return settlement;
          },
          (record) => {
            lost = true;
            return taken(record);
          },
        );
        if (stored !== undefined && !lost) keep(nameOf(request.identity), committed(request, stored), sentAt);
        return value;
      },
      async read(identity: OperationIdentity): Promise<OperationRecord | undefined> {
        const kept = recall(identity);
        if (kept !== undefined) return kept;
        const sentAt = clock.monotonic();
        const record = await store.read(identity);
        if (record?.state === 'completed' || record?.state === 'failed') keep(nameOf(identity), record, sentAt);
        return record;
      },
    },
  });
  return { store: cachedStore, recall };
}

/** The record a new key's commit wrote, as a read would return it; its clock starts at the commit, the expiry is counted from `sentAt` by `keep`. */
function committed(request: ClaimRequest, completion: Completion): CompletedRecord {
  const now = new Date();
  return {
    identity: request.identity,
    mode: 'atomic',
    fingerprint: request.fingerprint,
    principal: request.principal,
    createdAt: now,
    readAt: now,
    state: completion.state,
    response: completion.reply,
    responseOmitted: completion.omitted ?? false,
    completedAt: now,
    responseExpiresAt: new Date(now.getTime() + completion.retention.responseSeconds * 1000),
  };
}

/** One name per identity: each part's length first, so no tenant, operation or key can run into the next. */
const nameOf = ({ tenant, operation, key }: OperationIdentity): string =>
  `${tenant.length}:${tenant}${operation.length}:${operation}${key}`;

/**
 * The record with bytes of their own. A driver, or Node itself, cuts small
 * buffers from a shared 8 KiB slab, which a kept view would keep alive whole:
 * the cache would hold far more than it counts. Copied out as Node's
 * documentation advises, into Buffers outside the pool, which are sent as is.
 */
function ownBytes(record: CompletedRecord): CompletedRecord {
  const { fingerprint, principal, response } = record;
  if (!isShared(fingerprint) && !isShared(response.body) && (principal === undefined || !isShared(principal)))
    return record;
  return extend(record, {
    fingerprint: ownCopy(fingerprint),
    principal: principal === undefined ? undefined : ownCopy(principal),
    response: extend(response, { body: ownCopy(response.body) }),
  });
}

const isShared = (bytes: Uint8Array): boolean => bytes.byteLength !== bytes.buffer.byteLength;

function ownCopy(bytes: Uint8Array): Buffer {
  const copy = Buffer.allocUnsafeSlow(bytes.byteLength);
  copy.set(bytes);
  return copy;
}

/** What the entry for `record` under `name` holds: its fixed part, its strings as V8 stores them, its bytes. */
export function entryBytes(name: string, record: CompletedRecord): number {
  const { identity, response, fingerprint } = record;
  // The operation is the route's own string, shared by all its entries; the tenant and key came with the request.
  let size =
    ENTRY_OVERHEAD_BYTES +
    stringBytes(name) +
    stringBytes(identity.tenant) +
    stringBytes(identity.key) +
    response.body.byteLength +
    fingerprint.byteLength +
    (record.principal?.byteLength ?? 0);
  for (const [header, value] of Object.entries(response.headers)) {
    size += HEADER_SLOT_BYTES + stringBytes(header);
    if (typeof value === 'string') size += stringBytes(value);
    else size += LINES_ARRAY_BYTES + value.reduce((sum, line) => sum + HEADER_SLOT_BYTES + stringBytes(line), 0);
  }
  return size;
}

const BEYOND_LATIN1 = /[\u0100-\uffff]/;

/** A string on V8's heap: a 16-byte header, then a byte a character when all are Latin-1 and two otherwise, to a multiple of 8. */
function stringBytes(text: string): number {
  const width = BEYOND_LATIN1.test(text) ? 2 : 1;
  return 16 + Math.ceil((text.length * width) / 8) * 8;
}

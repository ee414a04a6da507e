/** Where a generator's time and random bits come from: the system's unless a test fixes them. */
export interface UuidV7Sources {
  /** Milliseconds since the Unix epoch. */
  readonly now: () => number;
  /** Fills `bytes` with random bits and returns it. */
  readonly random: (bytes: Uint8Array<ArrayBuffer>) => Uint8Array;
}

const system: UuidV7Sources = {
  now: Date.now,
  random: (bytes) => globalThis.crypto.getRandomValues(bytes),
};

/**
 * Makes RFC 9562 version 7 UUIDs: 48 bits of Unix milliseconds, then a 42-bit
 * counter (rand_a's 12 bits and the first 30 of rand_b: section 6.2, method
 * 1), then 32 random bits. A new millisecond seeds the counter at random
 * with its top bit clear; a key made in the same millisecond (or after the
 * clock stepped back) adds one to it, so every key sorts after the one before.
 * Time-ordered keys land on the rightmost page of the server's key index,
 * where random ones would dirty a different page each.
 */
export function uuidV7Generator(sources: UuidV7Sources = system): () => string {
  let last = -1;
  let counter = 0;
  return () => {
    const random = sources.random(new Uint8Array(10));
    const now = Math.max(0, Math.floor(sources.now()));
    if (now > last) {
      last = now;
      counter = seed(random);
    } else {
      // A seed leaves 2^41 steps: more keys than any client makes in the hours a clock may stand still or step back.
      counter += 1;
    }
    return format(last, counter, random.subarray(6));
  };
}

/** 41 random bits: the counter's top bit starts clear, leaving room for 2^41 more keys. */
function seed(random: Uint8Array): number {
  return ((random[0] ?? 0) & 0x01) * 2 ** 40 + readUint(random, 1, 5);
}

function readUint(bytes: Uint8Array, start: number, length: number): number {
  let value = 0;
  for (let i = start; i < start + length; i += 1) value = value * 256 + (bytes[i] ?? 0);
  return value;
}

/** Bits `from` and up of `value`, as one byte. */
function byteAt(value: number, from: number): number {
  return Math.floor(value / 2 ** from) & 0xff;
}

function format(ms: number, counter: number, tail: Uint8Array): string {
  const bytes = [
    ...[40, 32, 24, 16, 8, 0].map((shift) => byteAt(ms, shift)),
    0x70 | byteAt(counter, 38), // version 7, then the counter's top 4 bits
    byteAt(counter, 30),
    0x80 | (byteAt(counter, 24) & 0x3f), // variant 10, then 6 more
    byteAt(counter, 16),
    byteAt(counter, 8),
    byteAt(counter, 0),
    ...tail,
  ];
  const hex = bytes.map((byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The one generator every key is made by, so that keys made anywhere sort in the order they were made. */
export const uuidV7: () => string = uuidV7Generator();

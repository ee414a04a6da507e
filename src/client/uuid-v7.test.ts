import { describe, expect, it } from 'vitest';
import { uuidV7, uuidV7Generator, type UuidV7Sources } from './uuid-v7.js';

const layout = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The 48-bit Unix milliseconds at the front of a version 7 UUID. */
function decodedTime(uuid: string): number {
  return Number.parseInt(uuid.replace(/-/g, '').slice(0, 12), 16);
}

/** A clock that says `at.ms` whenever asked, and the system's random bits, or ones fixed by `fill`. */
function fixed(at: { ms: number }, fill?: number): UuidV7Sources {
  return {
    now: () => at.ms,
    random: (bytes) => (fill === undefined ? globalThis.crypto.getRandomValues(bytes) : bytes.fill(fill)),
  };
}

describe('uuidV7', () => {
  it('has version 7 and variant 10 in the RFC 9562 layout, whatever the random bits', () => {
    for (const fill of [0x00, 0xff, 0x5a]) {
      const key = uuidV7Generator(fixed({ ms: 1_700_000_000_000 }, fill))();
      expect(key).toMatch(layout);
    }
    expect(uuidV7()).toMatch(layout);
  });

  it('puts the Unix milliseconds in the first 48 bits', () => {
    for (const ms of [0, 1, 1_700_000_000_123, 2 ** 48 - 1]) {
      expect(decodedTime(uuidV7Generator(fixed({ ms }))())).toBe(ms);
    }
    const before = Date.now();
    const key = uuidV7();
    expect(decodedTime(key)).toBeGreaterThanOrEqual(before);
    expect(decodedTime(key)).toBeLessThanOrEqual(Date.now());
  });

  it('makes 10,000 keys in one millisecond, each after the one before and none twice', () => {
    const at = { ms: 1_700_000_000_000 };
    const next = uuidV7Generator(fixed(at));
    const keys = Array.from({ length: 10_000 }, next);
    expect(keys.every((key, i) => i === 0 || (keys[i - 1] ?? '') < key)).toBe(true);
    expect(new Set(keys).size).toBe(keys.length);
    expect(keys.every((key) => layout.test(key) && decodedTime(key) === at.ms)).toBe(true);
  });

  it('stays in order across milliseconds and when the clock steps back', () => {
    const at = { ms: 1_700_000_000_000 };
    const next = uuidV7Generator(fixed(at, 0xff));
    const keys: string[] = [];
    for (const ms of [at.ms, at.ms + 1, at.ms + 1, at.ms - 5_000, at.ms + 2]) {
      at.ms = ms;
      keys.push(next(), next());
    }
    expect([...keys].sort()).toEqual(keys);
    expect(new Set(keys).size).toBe(keys.length);
  });
});

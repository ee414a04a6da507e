import { describe, expect, it } from 'vitest';
import { waitFor } from './wait-for.js';

describe('waitFor', () => {
  it('resolves once the condition holds, polling again after it threw', async () => {
    let polls = 0;
    await waitFor(() => {
      polls += 1;
      if (polls === 1) throw new Error('not ready');
      return polls === 3;
    });
    expect(polls).toBe(3);
  });

  it('fails at its limit naming what it waited for and the last error seen', async () => {
    await expect(
      waitFor(() => Promise.reject(new Error('connection refused')), { what: 'the server', limitMs: 0 }),
    ).rejects.toThrow(/^Waited 0 ms for the server; it last threw Error: connection refused/);
  });

  it('names the condition by its source when told nothing else', async () => {
    await expect(waitFor(() => false, { limitMs: 0 })).rejects.toThrow(
      'Waited 0 ms for () => false; it was still false.',
    );
  });
});

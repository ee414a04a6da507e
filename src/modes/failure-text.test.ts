import { describe, expect, it } from 'vitest';
import { failureMessage } from './failure-text.js';

describe('failureMessage', () => {
  it('keeps a short message as it is, and cuts a long one to 1000 characters ending in an ellipsis', () => {
    expect(failureMessage(new Error('provider unavailable (503)'))).toBe('provider unavailable (503)');
    expect(failureMessage('thrown text')).toBe('thrown text');
    const long = failureMessage(new Error('x'.repeat(5000)));
    expect(long).toHaveLength(1000);
    expect(long.endsWith('x…')).toBe(true);
  });
});

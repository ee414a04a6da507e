import { describe, expect, it } from 'vitest';
import { describeCause, underlyingCause } from './underlying-cause.js';

describe('underlyingCause and describeCause', () => {
  it('find the socket error under fetch wrappers and name it', () => {
    const socket = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4567'), { code: 'ECONNREFUSED' });
    const wrapped = new TypeError('fetch failed', { cause: socket });
    expect(underlyingCause(wrapped)).toBe(socket);
    expect(describeCause(underlyingCause(wrapped))).toBe('connect ECONNREFUSED 127.0.0.1:4567');
  });

  it('describe an AggregateError without a message by its parts, and a bare code by the code', () => {
    const each = [new Error('connect ECONNREFUSED ::1:4567'), new Error('connect ECONNREFUSED 127.0.0.1:4567')];
    expect(describeCause(Object.assign(new AggregateError(each, ''), { code: 'ECONNREFUSED' }))).toBe(
      'connect ECONNREFUSED ::1:4567; connect ECONNREFUSED 127.0.0.1:4567',
    );
    expect(describeCause(Object.assign(new Error(''), { code: 'ECONNRESET' }))).toBe('ECONNRESET');
    expect(describeCause('plain')).toBe('plain');
  });
});

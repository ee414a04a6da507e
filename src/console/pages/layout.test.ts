import { describe, expect, it } from 'vitest';
import { listCaption } from './layout.js';

describe('listCaption', () => {
  const letters = {
    none: 'No dead letters.',
    one: 'dead letter',
    many: 'dead letters',
    order: 'most recently parked first',
  };

  it('counts one thing in the singular and more in the plural', () => {
    expect(listCaption({ items: [1], next: undefined }, letters)).toBe('1 dead letter, most recently parked first');
    expect(listCaption({ items: [1, 2], next: undefined }, letters)).toBe('2 dead letters, most recently parked first');
  });

  it('says when more pages follow, and when there is nothing', () => {
    expect(listCaption({ items: [1, 2], next: 'cursor' }, letters)).toBe(
      '2 dead letters on this page, most recently parked first',
    );
    expect(listCaption({ items: [], next: undefined }, letters)).toBe('No dead letters.');
    expect(listCaption({ items: [1], next: 'cursor' }, { none: 'None.', one: 'operation', many: 'operations' })).toBe(
      '1 operation on this page',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { numbersExact } from './json-numbers.js';

describe('numbersExact', () => {
  it('accepts numbers a double holds exactly, however spelt', () => {
    for (const text of ['1', '-0', '1.0', '1e0', '10E-1', '0.1', '0.10', '1e-1', '12.5', '9007199254740993e-10', '5e-324', '1.7976931348623157e308', '[1,{"a":-2.50}]']) expect(numbersExact(text), text).toBe(true);
  });
  it('refuses numbers a double rounds, or cannot hold', () => {
    for (const text of ['0.10000000000000000001', '1.0000000000000001', '9007199254740993', '1e400', '-1e400', '1e-400', '{"a":[true,null,0.30000000000000000004]}']) expect(numbersExact(text), text).toBe(false);
  });
  it('skips the digits inside strings, escaped quotes included', () => {
    expect(numbersExact('{"a":"0.10000000000000000001","b\\"1e400":"\\\\","c":1}')).toBe(true);
  });
  it('gives no verdict on text that is not JSON: the parser answers for it', () => {
    expect(numbersExact('a=0.10000000000000000001')).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';
import { equivalentJson } from './equivalent-json.js';

describe('equivalentJson', () => {
  it('writes the same JSON value with every object’s members in reverse order and spaces between tokens', () => {
    const body = '{"sku":"A-1","qty":2,"ship":{"to":"home","by":"express"},"tags":["x","y"]}';
    const rewritten = equivalentJson(body);
    expect(rewritten).toEqual({
      kind: 'rewritten',
      text: '{ "tags" : [ "x" , "y" ] , "ship" : { "by" : "express" , "to" : "home" } , "qty" : 2 , "sku" : "A-1" }',
      change: 'the same JSON with the members of 2 objects in reverse order and spaces between its tokens',
    });
    if (rewritten.kind !== 'rewritten') return;
    expect(JSON.parse(rewritten.text)).toEqual(JSON.parse(body));
  });

  it('keeps every number and string as written, so that no value changes in a round trip through a double', () => {
    const body = '{"id":12345678901234567890,"price":1.10,"note":"caf\\u00e9 \\"x\\"","e":1E+2,"ok":true,"none":null}';
    const rewritten = equivalentJson(body);
    expect(rewritten.kind === 'rewritten' && rewritten.text).toBe(
      '{ "none" : null , "ok" : true , "e" : 1E+2 , "note" : "caf\\u00e9 \\"x\\"" , "price" : 1.10 , "id" : 12345678901234567890 }',
    );
  });

  it('keeps arrays in order, whose order is their meaning, and changes only spacing where no object has two members', () => {
    expect(equivalentJson('[3,1,2]')).toEqual({
      kind: 'rewritten',
      text: '[ 3 , 1 , 2 ]',
      change: 'the same JSON with spaces between its tokens',
    });
    expect(equivalentJson('{}')).toMatchObject({ kind: 'rewritten', text: '{ }' });
  });

  it('adds a newline when the body was already written that way', () => {
    expect(equivalentJson('[ 3 , 1 ]')).toMatchObject({ kind: 'rewritten', text: '[ 3 , 1 ]\n' });
  });

  it('rewrites nothing that is not JSON, or whose meaning depends on member order (a name given twice)', () => {
    expect(equivalentJson('sku=A-1&qty=2')).toEqual({ kind: 'not-rewritable', reason: 'the body is not JSON' });
    expect(equivalentJson('{"a":1,}')).toMatchObject({ kind: 'not-rewritable', reason: 'the body is not JSON' });
    expect(equivalentJson('{"a":1} x')).toMatchObject({ kind: 'not-rewritable', reason: 'the body is not JSON' });
    expect(equivalentJson('{"a":1,"\\u0061":2}')).toEqual({
      kind: 'not-rewritable',
      reason: 'an object of the body names a member twice, so that its meaning depends on the order',
    });
  });
});

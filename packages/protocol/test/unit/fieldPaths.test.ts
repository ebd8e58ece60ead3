/**
 * Converters name a refused field by its whole path (`shards[1].accounts[0].address`), though
 * list elements are checked with names relative to themselves and the path is built only for a
 * refusal (checks.ts eachIn).
 */
import { describe, expect, it } from '@jest/globals';
import { ProtocolErrorCode, sendResultsFromProto } from '@monsoon/protocol';
import { eachIn, fixed, nonEmptyList } from '../../src/convert/checks.js';
import { expectProtocolError } from '../helpers/errors.js';

const ok = new Uint8Array(32).fill(1);

describe('field paths of refusals in lists', () => {
  it('names the element, a field of it, and a nested list element', () => {
    expectProtocolError(
      () => nonEmptyList([ok, ok, new Uint8Array(0)], 'bag.nodes'),
      ProtocolErrorCode.MissingField,
      'bag.nodes[2]',
    );
    const nested = [{ keys: [ok] }, { keys: [ok, ok, new Uint8Array(31)] }];
    expectProtocolError(
      () => eachIn(nested, 'items', (x) => eachIn(x.keys, 'keys', (k) => fixed(k, 32, ''))),
      ProtocolErrorCode.BadLength,
      'items[1].keys[2]',
    );
    expectProtocolError(
      () => eachIn([{ h: ok }, { h: ok.subarray(1) }], 'results', (x) => fixed(x.h, 32, 'txHash')),
      ProtocolErrorCode.BadLength,
      'results[1].txHash',
    );
  });

  it('passes other errors through unchanged, and converts every element otherwise', () => {
    const boom = new RangeError('boom');
    expect(() =>
      eachIn([1, 2], 'xs', (x) => {
        if (x === 2) throw boom;
        return x;
      }),
    ).toThrow(boom);
    expect(eachIn([1, 2, 3], 'xs', (x, i) => x * 10 + i)).toEqual([10, 21, 32]);
  });

  it('names a bad refuser of a SendTransactions result by its index', () => {
    const results = [
      { txHash: ok, accepted: true, error: '', refusedBy: '', fateUnknown: false },
      { txHash: ok, accepted: false, error: 'no', refusedBy: 'someone', fateUnknown: false },
    ];
    expectProtocolError(
      () => sendResultsFromProto({ results }),
      ProtocolErrorCode.BadEnum,
      'results[1].refusedBy',
    );
  });
});

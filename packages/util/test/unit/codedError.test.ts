/** The typed error base: codes, messages, per-code metadata (checked by tsc), the guard. */
import { describe, expect, it } from '@jest/globals';
import { CodedError, codedErrorGuard } from '@monsoon/util';

enum ShopErrorCode {
  SoldOut = 'SOLD_OUT',
  Closed = 'CLOSED',
}

interface ShopErrorMeta {
  [ShopErrorCode.SoldOut]: { item: number; left: number };
  [ShopErrorCode.Closed]: { until?: string };
}

class ShopError extends CodedError<ShopErrorCode, ShopErrorMeta> {}
const isShopError = codedErrorGuard<ShopError, ShopErrorMeta>(ShopError);

class LooseError extends CodedError<'ANY'> {}

describe('CodedError', () => {
  it('carries its code, a message prefixed with it, its metadata, its cause and its class name', () => {
    const cause = new RangeError('underneath');
    const e = new ShopError(
      ShopErrorCode.SoldOut,
      'item 3: expected 1 left, found 0',
      { item: 3, left: 0 },
      cause,
    );
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe('ShopError');
    expect(e.code).toBe('SOLD_OUT');
    expect(e.message).toBe('SOLD_OUT: item 3: expected 1 left, found 0');
    expect(e.detail).toBe('item 3: expected 1 left, found 0');
    expect(e.meta).toEqual({ item: 3, left: 0 });
    expect(e.cause).toBe(cause);
    expect(new ShopError(ShopErrorCode.Closed, 'for the night').meta).toEqual({});
    expect(new ShopError(ShopErrorCode.Closed, 'x').cause).toBeUndefined();
  });

  it("type-checks each code's metadata (the @ts-expect-error lines fail tsc if they compile)", () => {
    // @ts-expect-error SOLD_OUT needs { item, left }
    new ShopError(ShopErrorCode.SoldOut, 'no meta');
    // @ts-expect-error `left` is a number
    new ShopError(ShopErrorCode.SoldOut, 'wrong type', { item: 1, left: 'none' });
    // @ts-expect-error CLOSED has no `item`
    new ShopError(ShopErrorCode.Closed, 'extra field', { item: 1 });
    // A domain that declares no shapes takes any fields, or none.
    expect(new LooseError('ANY', 'x', { whatever: 1 }).meta.whatever).toBe(1);
    expect(new LooseError('ANY', 'x').meta).toEqual({});
  });

  it('the guard recognises the class and narrows to one code and its metadata', () => {
    const e: unknown = new ShopError(ShopErrorCode.SoldOut, 'x', { item: 7, left: 0 });
    expect(isShopError(e)).toBe(true);
    expect(isShopError(e, ShopErrorCode.Closed)).toBe(false);
    expect(isShopError(new LooseError('ANY', 'x'))).toBe(false);
    expect(isShopError(new Error('x'))).toBe(false);
    if (!isShopError(e, ShopErrorCode.SoldOut)) throw new Error('unreachable');
    const item: number = e.meta.item; // typed: a number, not unknown
    expect(item).toBe(7);
  });
});

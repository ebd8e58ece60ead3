/** A service's status function from its rules; the status as grpc-js sends it. */
import { status } from '@grpc/grpc-js';
import { describe, expect, it } from '@jest/globals';
import {
  CallRefused,
  ERROR_CODE_TRAILER,
  grpcStatusMapping,
  statusName,
  toServiceError,
} from '@monsoon/edge';
import { CodedError } from '@monsoon/util';

class ShopError extends CodedError<'SOLD_OUT' | 'CLOSED' | 'LEDGER_CORRUPT'> {}
class WireError extends CodedError<'BAD_LENGTH' | 'MISSING_FIELD'> {}
class OtherError extends CodedError<'SOMETHING'> {}

const grpcStatusOf = grpcStatusMapping([
  { is: (e): e is WireError => e instanceof WireError, otherwise: status.INVALID_ARGUMENT },
  {
    is: (e): e is ShopError => e instanceof ShopError,
    codes: { SOLD_OUT: status.FAILED_PRECONDITION, CLOSED: status.UNAVAILABLE },
  },
]);

describe('grpcStatusMapping', () => {
  it('a listed code gets its status, with the error message and code', () => {
    expect(grpcStatusOf(new ShopError('SOLD_OUT', 'item 3: expected 1 left, found 0'))).toEqual({
      code: status.FAILED_PRECONDITION,
      details: 'SOLD_OUT: item 3: expected 1 left, found 0',
      errorCode: 'SOLD_OUT',
      internal: false,
    });
    expect(grpcStatusOf(new ShopError('CLOSED', 'shutting down')).code).toBe(status.UNAVAILABLE);
  });

  it('a code not listed gets the rule’s `otherwise`, or INTERNAL for the operator', () => {
    expect(grpcStatusOf(new WireError('MISSING_FIELD', 'header'))).toEqual({
      code: status.INVALID_ARGUMENT,
      details: 'MISSING_FIELD: header',
      errorCode: 'MISSING_FIELD',
      internal: false,
    });
    expect(grpcStatusOf(new ShopError('LEDGER_CORRUPT', 'page 9'))).toEqual({
      code: status.INTERNAL,
      details: 'LEDGER_CORRUPT: page 9',
      errorCode: 'LEDGER_CORRUPT',
      internal: true,
    });
  });

  it('an error no rule takes is INTERNAL; a coded one keeps its code for the trailer', () => {
    expect(grpcStatusOf(new RangeError('oops'))).toEqual({
      code: status.INTERNAL,
      details: 'internal error: oops',
      errorCode: undefined,
      internal: true,
    });
    expect(grpcStatusOf(new OtherError('SOMETHING', 'x'))).toEqual({
      code: status.INTERNAL,
      details: 'internal error: SOMETHING: x',
      errorCode: 'SOMETHING',
      internal: true,
    });
    expect(grpcStatusOf('a string')).toMatchObject({ details: 'internal error: a string', internal: true });
  });

  it('CallRefused carries its own status', () => {
    expect(
      grpcStatusOf(new CallRefused(status.NOT_FOUND, 'UNKNOWN_CODE', 'code 00 is not held here')),
    ).toEqual({
      code: status.NOT_FOUND,
      details: 'UNKNOWN_CODE: code 00 is not held here',
      errorCode: 'UNKNOWN_CODE',
      internal: false,
    });
  });
});

describe('toServiceError, statusName', () => {
  it('puts the error code in the trailer, and none when there is none', () => {
    const e = toServiceError(grpcStatusOf(new ShopError('SOLD_OUT', 'item 3')));
    expect({ code: e.code, details: e.details }).toEqual({
      code: status.FAILED_PRECONDITION,
      details: 'SOLD_OUT: item 3',
    });
    expect(e.metadata.get(ERROR_CODE_TRAILER)).toEqual(['SOLD_OUT']);
    expect(toServiceError(grpcStatusOf(new Error('x'))).metadata.get(ERROR_CODE_TRAILER)).toEqual([]);
  });

  it('names a status as metrics label it', () => {
    expect(statusName(status.INVALID_ARGUMENT)).toBe('INVALID_ARGUMENT');
    expect(statusName(status.OK)).toBe('OK');
  });
});

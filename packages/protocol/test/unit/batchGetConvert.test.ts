import { describe, expect, it } from '@jest/globals';
import {
  atNumber,
  type BatchGetRequest,
  type BatchGetResponse,
  batchGetRequestFromProto,
  batchGetRequestToProto,
  batchGetResponseFromProto,
  batchGetResponseToProto,
  ProtocolErrorCode,
  storagePb,
} from '@monsoon/protocol';
import { address, filled, hash, wire } from '../helpers/bytes.js';
import { expectProtocolError } from '../helpers/errors.js';

const request: BatchGetRequest = {
  at: atNumber(3n),
  queries: [
    { address: address(1), slots: [hash(1), hash(2)], code: true },
    { address: address(2), slots: [], code: false },
  ],
  omitLevels: 1,
};

const response: BatchGetResponse = {
  blockHash: hash(9),
  number: 3n,
  results: [
    {
      address: address(1),
      accountRlp: filled(76),
      slotValues: [Uint8Array.of(7), new Uint8Array(0)],
      code: filled(50),
    },
    { address: address(2), accountRlp: undefined, slotValues: [], code: new Uint8Array(0) },
  ],
  bag: [filled(532, 1), filled(120, 2)],
};

describe('BatchGet', () => {
  it('round-trips request and response through the wire', () => {
    const req = batchGetRequestFromProto(wire(storagePb.BatchGetRequest, batchGetRequestToProto(request)));
    expect(req).toStrictEqual(request);
    const pb = wire(storagePb.BatchGetResponse, batchGetResponseToProto(response, request));
    expect(batchGetResponseFromProto(pb, request)).toStrictEqual(response);
  });

  it('refuses a bad address or slot in a query', () => {
    const pb = batchGetRequestToProto(request);
    const badSlot = {
      ...pb,
      queries: [pb.queries[0]!, { address: address(2), slots: [filled(33)], code: false }],
    };
    expectProtocolError(
      () => batchGetRequestFromProto(badSlot),
      ProtocolErrorCode.BadLength,
      'queries[1].slots[0]',
    );
    const badAddress = { ...pb, queries: [{ ...pb.queries[0]!, address: filled(21) }] };
    expectProtocolError(
      () => batchGetRequestFromProto(badAddress),
      ProtocolErrorCode.BadLength,
      'queries[0].address',
    );
  });

  it('refuses a slot value that is not minimal', () => {
    const pb = batchGetResponseToProto(response);
    pb.results[0]!.slotValues[0] = Uint8Array.of(0, 7);
    expectProtocolError(
      () => batchGetResponseFromProto(pb),
      ProtocolErrorCode.BadQuantity,
      'results[0].slotValues[0]',
    );
  });

  it('refuses results that do not answer the queries', () => {
    const pb = batchGetResponseToProto(response);
    expectProtocolError(
      () => batchGetResponseFromProto({ ...pb, results: pb.results.slice(0, 1) }, request),
      ProtocolErrorCode.Inconsistent,
      'results',
    );
    const swapped = { ...pb, results: [pb.results[1]!, pb.results[0]!] };
    const e = expectProtocolError(
      () => batchGetResponseFromProto(swapped, request),
      ProtocolErrorCode.Inconsistent,
      'results[0].address',
    );
    expect(e.meta.expected).toBe(`0x${Buffer.from(address(1)).toString('hex')}`);
    const fewerValues = { ...pb, results: [{ ...pb.results[0]!, slotValues: [] }, pb.results[1]!] };
    expectProtocolError(
      () => batchGetResponseFromProto(fewerValues, request),
      ProtocolErrorCode.Inconsistent,
      'results[0].slotValues',
    );
    // Without the request there is nothing to match against.
    expect(batchGetResponseFromProto(swapped).results[0]!.address).toStrictEqual(address(2));
  });
});

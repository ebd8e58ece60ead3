import { describe, expect, it } from '@jest/globals';
import {
  minerPb,
  type PeerMessage,
  ProtocolErrorCode,
  peerMessageFromProto,
  peerMessageToProto,
  type SubmitRequest,
  type SubmitResponse,
  submitRequestFromProto,
  submitRequestToProto,
  submitResponseFromProto,
  submitResponseToProto,
  TxStatus,
  txStatusFromProto,
} from '@monsoon/protocol';
import { filled, hash, wire } from '../helpers/bytes.js';
import { expectProtocolError } from '../helpers/errors.js';

const request: SubmitRequest = {
  transactions: [filled(110, 1), filled(180, 2), filled(110, 3)],
  bag: [filled(532, 4)],
  prefetchedRoot: hash(5),
};

const response: SubmitResponse = {
  results: [
    { txHash: hash(1), status: TxStatus.Accepted, reason: '', staleKeys: [] },
    {
      txHash: hash(2),
      status: TxStatus.Invalid,
      reason: 'nonce too low: expected 4, found 3',
      staleKeys: [],
    },
    { txHash: hash(3), status: TxStatus.Stale, reason: 'witness too old', staleKeys: [hash(7), hash(8)] },
  ],
};

describe('Submit', () => {
  it('round-trips request and response through the wire, with every status', () => {
    expect(submitRequestFromProto(wire(minerPb.SubmitRequest, submitRequestToProto(request)))).toStrictEqual(
      request,
    );
    const pb = wire(minerPb.SubmitResponse, submitResponseToProto(response));
    expect(pb.results.map((r) => r.status)).toEqual([
      minerPb.Status.STATUS_ACCEPTED,
      minerPb.Status.STATUS_INVALID,
      minerPb.Status.STATUS_STALE,
    ]);
    expect(submitResponseFromProto(pb, request)).toStrictEqual(response);
  });

  it('refuses STATUS_UNSPECIFIED and statuses this version does not know', () => {
    const e = expectProtocolError(
      () => txStatusFromProto(minerPb.Status.STATUS_UNSPECIFIED),
      ProtocolErrorCode.BadEnum,
      'status',
    );
    expect(e.meta.found).toBe('STATUS_UNSPECIFIED');
    // An unknown number on the wire decodes as itself.
    const pb = submitResponseToProto(response);
    pb.results[1]!.status = 9 as minerPb.Status;
    const back = wire(minerPb.SubmitResponse, pb);
    expectProtocolError(() => submitResponseFromProto(back), ProtocolErrorCode.BadEnum, 'results[1].status');
  });

  it('refuses a bad tx hash, stale keys on a transaction that is not stale, a result count that is not the tx count', () => {
    const pb = submitResponseToProto(response);
    expectProtocolError(
      () => submitResponseFromProto({ results: [{ ...pb.results[0]!, txHash: filled(31) }] }),
      ProtocolErrorCode.BadLength,
      'results[0].txHash',
    );
    expectProtocolError(
      () => submitResponseFromProto({ results: [{ ...pb.results[0]!, staleKeys: [hash()] }] }),
      ProtocolErrorCode.Inconsistent,
      'results[0].staleKeys',
    );
    expectProtocolError(
      () => submitResponseFromProto({ results: [{ ...pb.results[2]!, staleKeys: [filled(20)] }] }),
      ProtocolErrorCode.BadLength,
      'results[0].staleKeys[0]',
    );
    expectProtocolError(
      () => submitResponseFromProto({ results: pb.results.slice(1) }, request),
      ProtocolErrorCode.Inconsistent,
      'results',
    );
  });

  it('refuses an empty transaction and a prefetched root that is not 32 bytes', () => {
    expectProtocolError(
      () => submitRequestToProto({ ...request, transactions: [new Uint8Array(0)] }),
      ProtocolErrorCode.MissingField,
      'transactions[0]',
    );
    expectProtocolError(
      () => submitRequestFromProto({ ...submitRequestToProto(request), prefetchedRoot: new Uint8Array(0) }),
      ProtocolErrorCode.BadLength,
      'prefetchedRoot',
    );
  });

  it('round-trips sender keys (64 bytes a transaction); without them, none are sent or read', () => {
    const withKeys: SubmitRequest = { ...request, senderKeys: filled(64 * 3, 6) };
    const pb = wire(minerPb.SubmitRequest, submitRequestToProto(withKeys));
    expect(pb.senderKeys).toHaveLength(192);
    expect(submitRequestFromProto(pb)).toStrictEqual(withKeys);
    const none = wire(minerPb.SubmitRequest, submitRequestToProto(request));
    expect(none.senderKeys).toHaveLength(0);
    expect('senderKeys' in submitRequestFromProto(none)).toBe(false);
  });

  it('refuses sender keys that are not 64 bytes for each transaction, both ways', () => {
    for (const length of [64, 64 * 3 - 1, 64 * 4]) {
      expectProtocolError(
        () => submitRequestToProto({ ...request, senderKeys: filled(length, 7) }),
        ProtocolErrorCode.BadLength,
        'senderKeys',
      );
      expectProtocolError(
        () => submitRequestFromProto({ ...submitRequestToProto(request), senderKeys: filled(length, 7) }),
        ProtocolErrorCode.BadLength,
        'senderKeys',
      );
    }
  });
});

describe('Peer', () => {
  const message: PeerMessage = {
    kind: 'block',
    block: { headerRlp: filled(540), transactions: [filled(110)], bag: [filled(532), filled(83)] },
  };

  it('round-trips a block through the wire', () => {
    expect(peerMessageFromProto(wire(minerPb.PeerMessage, peerMessageToProto(message)))).toStrictEqual(
      message,
    );
  });

  it('round-trips a request for a block and its ancestors; refuses a hash of the wrong length', () => {
    const get = { kind: 'getBlocks' as const, hash: hash(9), count: 64 };
    expect(peerMessageFromProto(wire(minerPb.PeerMessage, peerMessageToProto(get)))).toStrictEqual(get);
    expectProtocolError(
      () =>
        peerMessageFromProto(
          wire(minerPb.PeerMessage, {
            msg: { $case: 'getBlocks', value: { hash: filled(31, 1), count: 1 } },
          }),
        ),
      ProtocolErrorCode.BadLength,
      'getBlocks.hash',
    );
  });

  it('refuses a message with nothing in it, and a block without a header', () => {
    expectProtocolError(
      () => peerMessageFromProto(wire(minerPb.PeerMessage, {})),
      ProtocolErrorCode.MissingField,
      'msg',
    );
    expectProtocolError(
      () => peerMessageToProto({ kind: 'block', block: { ...message.block, headerRlp: new Uint8Array(0) } }),
      ProtocolErrorCode.MissingField,
      'block.headerRlp',
    );
  });
});

import { describe, expect, it } from '@jest/globals';
import {
  atHash,
  atNumber,
  type GetAccountResponse,
  type GetShardRootsResponse,
  type GetStorageResponse,
  getAccountRequestFromProto,
  getAccountRequestToProto,
  getAccountResponseFromProto,
  getAccountResponseToProto,
  getCodeRequestFromProto,
  getCodeRequestToProto,
  getCodeResponseFromProto,
  getCodeResponseToProto,
  getNodesRequestFromProto,
  getNodesRequestToProto,
  getNodesResponseFromProto,
  getNodesResponseToProto,
  getShardRootsRequestFromProto,
  getShardRootsRequestToProto,
  getShardRootsResponseFromProto,
  getShardRootsResponseToProto,
  getStorageRequestFromProto,
  getStorageRequestToProto,
  getStorageResponseFromProto,
  getStorageResponseToProto,
  HEAD,
  ProtocolErrorCode,
  storagePb,
} from '@monsoon/protocol';
import { address, filled, hash, wire } from '../helpers/bytes.js';
import { expectProtocolError } from '../helpers/errors.js';

describe('GetAccount', () => {
  it('round-trips request and response, present and absent accounts', () => {
    const req = { address: address(4), at: atNumber(77n), omitLevels: 2 };
    expect(
      getAccountRequestFromProto(wire(storagePb.GetAccountRequest, getAccountRequestToProto(req))),
    ).toStrictEqual(req);
    for (const accountRlp of [filled(70, 5), undefined]) {
      const res: GetAccountResponse = {
        blockHash: hash(1),
        number: 77n,
        accountRlp,
        proof: [filled(532), filled(83)],
      };
      const back = getAccountResponseFromProto(
        wire(storagePb.GetAccountResponse, getAccountResponseToProto(res)),
      );
      expect(back).toStrictEqual(res);
    }
  });

  it('refuses a 19-byte address, saying what it expected and found', () => {
    const e = expectProtocolError(
      () => getAccountRequestFromProto({ address: filled(19), omitLevels: 0 }),
      ProtocolErrorCode.BadLength,
      'address',
    );
    expect(e.message).toBe('BAD_LENGTH: address: expected 20 bytes, found 19');
    expect(e.meta).toEqual({ field: 'address', expected: '20 bytes', found: '19' });
  });

  it('refuses more omitted levels than a trie has', () => {
    expectProtocolError(
      () => getAccountRequestToProto({ address: address(), at: HEAD, omitLevels: 65 }),
      ProtocolErrorCode.BadQuantity,
      'omitLevels',
    );
  });

  it('refuses an empty account RLP in the domain (absence is undefined) and an empty proof node', () => {
    const res: GetAccountResponse = {
      blockHash: hash(),
      number: 1n,
      accountRlp: new Uint8Array(0),
      proof: [],
    };
    expectProtocolError(() => getAccountResponseToProto(res), ProtocolErrorCode.Inconsistent, 'accountRlp');
    expectProtocolError(
      () =>
        getAccountResponseFromProto({
          blockHash: hash(),
          number: 1n,
          accountRlp: new Uint8Array(0),
          proof: [filled(9), new Uint8Array(0)],
        }),
      ProtocolErrorCode.MissingField,
      'proof[1]',
    );
  });
});

describe('GetStorage', () => {
  const res: GetStorageResponse = {
    blockHash: hash(1),
    number: 5n,
    value: filled(3, 1),
    accountProof: [filled(100)],
    storageProof: [filled(40)],
  };

  it('round-trips request and response', () => {
    const req = { address: address(), slot: hash(9), at: atHash(hash(1)), omitLevels: 0 };
    expect(
      getStorageRequestFromProto(wire(storagePb.GetStorageRequest, getStorageRequestToProto(req))),
    ).toStrictEqual(req);
    expect(
      getStorageResponseFromProto(wire(storagePb.GetStorageResponse, getStorageResponseToProto(res))),
    ).toStrictEqual(res);
  });

  it('refuses a 31-byte slot', () => {
    expectProtocolError(
      () => getStorageRequestFromProto({ address: address(), slot: filled(31), omitLevels: 0 }),
      ProtocolErrorCode.BadLength,
      'slot',
    );
  });

  it('refuses a value with a leading zero byte or over 32 bytes', () => {
    const e = expectProtocolError(
      () =>
        getStorageResponseFromProto({
          ...res,
          value: Uint8Array.of(0, 1),
          accountProof: [],
          storageProof: [],
        }),
      ProtocolErrorCode.BadQuantity,
      'value',
    );
    expect(e.meta.found).toBe('a leading zero byte');
    expectProtocolError(
      () => getStorageResponseToProto({ ...res, value: filled(33) }),
      ProtocolErrorCode.BadQuantity,
      'value',
    );
  });
});

describe('GetCode', () => {
  it('round-trips, and refuses a code hash that is not 32 bytes', () => {
    const req = { codeHash: hash(3) };
    expect(getCodeRequestFromProto(wire(storagePb.GetCodeRequest, getCodeRequestToProto(req)))).toStrictEqual(
      req,
    );
    const res = { code: filled(1000) };
    expect(
      getCodeResponseFromProto(wire(storagePb.GetCodeResponse, getCodeResponseToProto(res))),
    ).toStrictEqual(res);
    expectProtocolError(
      () => getCodeRequestToProto({ codeHash: filled(20) }),
      ProtocolErrorCode.BadLength,
      'codeHash',
    );
  });
});

describe('GetNodes', () => {
  const req = { hashes: [hash(1), hash(2), hash(3)], paths: [] };

  it('round-trips, with and without paths, unknown nodes as undefined', () => {
    expect(
      getNodesRequestFromProto(wire(storagePb.GetNodesRequest, getNodesRequestToProto(req))),
    ).toStrictEqual(req);
    const withPaths = { ...req, paths: [Uint8Array.of(), Uint8Array.of(3, 15), new Uint8Array(128).fill(9)] };
    expect(
      getNodesRequestFromProto(wire(storagePb.GetNodesRequest, getNodesRequestToProto(withPaths))),
    ).toStrictEqual(withPaths);
    const res = { nodes: [filled(10), undefined, filled(20)] };
    const pb = wire(storagePb.GetNodesResponse, getNodesResponseToProto(res));
    expect(pb.nodes[1]).toHaveLength(0);
    expect(getNodesResponseFromProto(pb, req)).toStrictEqual(res);
  });

  it('refuses a bad hash, and a node count that is not the hash count', () => {
    expectProtocolError(
      () => getNodesRequestFromProto({ hashes: [hash(), filled(31)], paths: [] }),
      ProtocolErrorCode.BadLength,
      'hashes[1]',
    );
    expectProtocolError(
      () => getNodesRequestFromProto({ hashes: [hash(), hash()], paths: [Uint8Array.of(1)] }),
      ProtocolErrorCode.Inconsistent,
      'paths',
    );
    expectProtocolError(
      () => getNodesRequestFromProto({ hashes: [hash()], paths: [Uint8Array.of(1, 16)] }),
      ProtocolErrorCode.Inconsistent,
      'paths[0]',
    );
    expectProtocolError(
      () => getNodesRequestFromProto({ hashes: [hash()], paths: [new Uint8Array(129)] }),
      ProtocolErrorCode.Inconsistent,
      'paths[0]',
    );
    expectProtocolError(
      () => getNodesResponseFromProto({ nodes: [filled(10)] }, req),
      ProtocolErrorCode.Inconsistent,
      'nodes',
    );
  });
});

describe('GetShardRoots', () => {
  const res: GetShardRootsResponse = {
    blockHash: hash(1),
    number: 9n,
    stateRoot: hash(2),
    shardCount: 16,
    roots: [
      { shard: 3, root: hash(3) },
      { shard: 15, root: hash(4) },
    ],
  };

  it('round-trips request and response', () => {
    const req = { at: HEAD };
    expect(
      getShardRootsRequestFromProto(wire(storagePb.GetShardRootsRequest, getShardRootsRequestToProto(req))),
    ).toStrictEqual(req);
    expect(
      getShardRootsResponseFromProto(
        wire(storagePb.GetShardRootsResponse, getShardRootsResponseToProto(res)),
      ),
    ).toStrictEqual(res);
  });

  it('refuses a shard count other than 16 or 256, a shard beyond it, and a shard twice', () => {
    const pb = getShardRootsResponseToProto(res);
    expectProtocolError(
      () => getShardRootsResponseFromProto({ ...pb, shardCount: 10 }),
      ProtocolErrorCode.BadShard,
      'shardCount',
    );
    const e = expectProtocolError(
      () => getShardRootsResponseFromProto({ ...pb, roots: [{ shard: 16, root: hash() }] }),
      ProtocolErrorCode.BadShard,
      'roots[0].shard',
    );
    expect(e.message).toBe('BAD_SHARD: roots[0].shard: expected a shard below 16, found 16');
    expectProtocolError(
      () => getShardRootsResponseToProto({ ...res, roots: [res.roots[0]!, res.roots[0]!] }),
      ProtocolErrorCode.BadShard,
      'roots[1].shard',
    );
  });
});
